return {
  proto = { "TEXT", "NUMBER" },
  eval = function(args)
    local a, b, c, d, bits = args[1]:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)/(%d+)$")
    if not a then
      error("not an IPv4 network: " .. args[1])
    end
    return a
  end,
}
