-- What tostring and string.format show of a table and a function.
return { proto = {}, eval = function()
  local f = function() end
  return cf2.list({ tostring({}), tostring(f), string.format("%s/%s", {}, f) })
end }
