-- port_of(NAME): the Port of the resource NAME, looked up by path.
return {
  proto = { "TEXT" },
  eval = function(args, ctx)
    return ctx:lookup(args[1] .. ".Port")
  end,
}
