-- cidr(NET, N): the N-th address of the IPv4 network NET, which is written as "ADDRESS/BITS".
--
--   Gateway => cidr('10.1.0.0/16', 1)        // '10.1.0.1'
--   Net     => cidr('10.1.0.0/16', 0)        // '10.1.0.0'
--
-- N may be negative: -1 is the last address of the network (its broadcast address).
-- An address that is not in the network, or text that is not a network, is an error.

local function parse(net)
  local a, b, c, d, bits = net:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)/(%d+)$")
  if not a then
    error("`" .. net .. "` is not an IPv4 network such as 10.0.0.0/8", 0)
  end
  local parts = { tonumber(a), tonumber(b), tonumber(c), tonumber(d) }
  bits = tonumber(bits)
  local address = 0
  for _, p in ipairs(parts) do
    if p > 255 then
      error("`" .. net .. "`: " .. p .. " is not a byte", 0)
    end
    address = address * 256 + p
  end
  if bits > 32 then
    error("`" .. net .. "`: a network has at most 32 bits", 0)
  end
  local size = 1 << (32 - bits)
  return address - address % size, size
end

local function dotted(address)
  return string.format("%d.%d.%d.%d", (address >> 24) & 255, (address >> 16) & 255,
    (address >> 8) & 255, address & 255)
end

return {
  description = "the N-th address of an IPv4 network",
  proto = { "TEXT", "NUMBER" },
  eval = function(args, ctx)
    local base, size = parse(args[1])
    local n = args[2]
    if math.type(n) ~= "integer" then
      error("the address number must be a whole number, not " .. tostring(n), 0)
    end
    if n < 0 then
      n = size + n
    end
    if n < 0 or n >= size then
      error(string.format("%s has %d addresses: there is no address number %d", args[1], size, args[2]), 0)
    end
    return dotted(base + n)
  end,
}
