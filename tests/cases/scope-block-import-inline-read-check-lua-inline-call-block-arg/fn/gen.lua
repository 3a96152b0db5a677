return {
  proto = { "BLOCK" },
  eval = function(args, ctx)
    return { Port = args[1].a * 100 }
  end,
}
