-- The keys of a set, in the order pairs() gives them.
return { proto = { "LIST" }, eval = function(args)
  local set = {}
  for _, v in ipairs(args[1]) do set[v] = true end
  set[3] = true
  set[true] = true
  local out = cf2.list()
  for k in pairs(set) do out[#out + 1] = tostring(k) end
  return out
end }
