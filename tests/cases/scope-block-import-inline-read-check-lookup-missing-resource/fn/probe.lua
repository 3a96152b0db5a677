return {
  proto = { "STRING" },
  eval = function(args, ctx)
    local ok, v = pcall(function() return ctx:lookup(args[1]) end)
    if ok and v ~= nil then return v end
    return false
  end,
}
