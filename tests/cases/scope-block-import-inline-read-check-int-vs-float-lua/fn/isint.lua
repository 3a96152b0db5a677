return {
  proto = { "NUMBER" },
  eval = function(args, ctx)
    return math.type(args[1]) == "integer"
  end,
}
