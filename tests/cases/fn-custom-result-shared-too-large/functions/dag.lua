-- 40 tables nested in each other twice: 2^40 values once copied.
return { proto = {}, eval = function()
  local t = "leaf"
  for i = 1, 40 do t = {t, t} end
  return t
end }
