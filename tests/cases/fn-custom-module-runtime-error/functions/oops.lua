return {
  proto = { "NUMBER" },
  eval = function(args)
    local t = nil
    return t.field + args[1]
  end,
}
