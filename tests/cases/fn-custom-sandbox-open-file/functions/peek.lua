return {
  proto = { "TEXT" },
  eval = function(args)
    local f = io.open(args[1])
    return f:read("a")
  end,
}
