-- Reference §6.1's `add`, in Lua: Proto (NUMBER, NUMBER) and an Eval returning OK(a + b).
return {
  proto = { "NUMBER", "NUMBER" },
  eval = function(args, ctx)
    return args[1] + args[2]
  end,
}
