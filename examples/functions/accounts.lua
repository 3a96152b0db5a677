-- accounts(NAMES, FIRST_UID): one block per user, numbered from FIRST_UID. It returns a
-- block, so it can also be used inline as a statement (reference §3.12): the accounts
-- then join the block that holds the call.
--
--   Users => {
--     accounts([ann, bob], 1000)     // Users.ann.uid is 1000, Users.bob.uid 1001
--     root => { uid => 0 }
--   }

return {
  proto = { "LIST", "NUMBER" },
  eval = function(args, ctx)
    local users = cf2.block()
    for i, name in ipairs(args[1]) do
      users[name] = cf2.block({ uid = args[2] + i - 1 })
      users[name].home = "/home/" .. name
    end
    return users
  end,
}
