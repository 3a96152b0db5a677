return {
  proto = { "LIST" },
  eval = function(args, ctx)
    return args[1][1].a
  end,
}
