-- ~(version_max)>: the highest of dotted version numbers, compared part by part
-- (so 1.10 is above 1.9, which plain `~(max)>` on text gets wrong).
--
--   OpenSSL ~(version_max)> '1.1.1'      // in one aspect
--   OpenSSL ~(version_max)> '3.0.2'      // in another: the result is '3.0.2'
--
-- It is commutative, so aspects imported side by side can each ask for a minimum version.
-- As a function, version_max(LIST) gives the highest version of a list.

local function parts(v)
  local t = {}
  for p in tostring(v):gmatch("[^.]+") do
    t[#t + 1] = tonumber(p) or error("`" .. tostring(v) .. "` is not a dotted version number", 0)
  end
  return t
end

local function less(a, b)
  local x, y = parts(a), parts(b)
  for i = 1, math.max(#x, #y) do
    local p, q = x[i] or 0, y[i] or 0
    if p ~= q then
      return p < q
    end
  end
  return false
end

local function highest(list)
  local best
  for _, v in ipairs(list) do
    if best == nil or less(best, v) then
      best = v
    end
  end
  return best
end

return {
  description = "the highest dotted version number",
  proto = { "LIST" },
  eval = function(args)
    if #args[1] == 0 then
      error("version_max of an empty list", 0)
    end
    return highest(args[1])
  end,
  commutative = true,
  mutate = function(top, lower)
    local all = {}
    for _, v in ipairs(top) do
      all[#all + 1] = v
    end
    if lower ~= nil then
      all[#all + 1] = lower
    end
    return highest(all)
  end,
}
