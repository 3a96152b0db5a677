return { proto = { "TEXT" }, eval = function(args, ctx)
  local ok, err = pcall(function() return ctx:lookup(args[1]) end)
  if ok then return 'read' end
  return 'caught'
end }
