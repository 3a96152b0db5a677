return { proto = { "NUMBER" }, eval = function(args)
  local t = setmetatable({}, {__index = table.concat})
  return #table.concat(t, '', 1, args[1])
end }
