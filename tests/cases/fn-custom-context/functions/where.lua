return {
  proto = {},
  eval = function(args, ctx)
    return cf2.block({
      name = ctx.name, file = ctx.file, line = ctx.line, column = ctx.column,
      resource = ctx.resource, port = ctx:lookup("Web.Ports.1"), web = ctx:lookup("Web"),
    })
  end,
}
