-- About 1 MiB of Lua memory, but 100 references to one 1 MiB string: 100 MiB once copied.
return { proto = {}, eval = function()
  local s = ("x"):rep(1024 * 1024)
  local t = {}
  for i = 1, 100 do t[i] = s end
  return t
end }
