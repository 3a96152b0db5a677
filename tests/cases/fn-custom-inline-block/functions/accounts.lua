return {
  proto = { "LIST", "NUMBER" },
  eval = function(args)
    local users = cf2.block()
    for i, name in ipairs(args[1]) do
      users[name] = cf2.block({ uid = args[2] + i - 1 })
    end
    return users
  end,
}
