return {
  proto = { "BLOCK" },
  eval = function(args, ctx)
    local n = 0
    for _, v in pairs(args[1]) do n = n + v end
    return n
  end,
}
