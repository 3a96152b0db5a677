return {
  proto = { "STRING" },
  eval = function(args, ctx)
    return ctx:lookup(args[1]).a
  end,
}
