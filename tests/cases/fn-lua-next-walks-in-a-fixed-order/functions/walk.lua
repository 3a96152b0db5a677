-- The keys of a set, in the order next() gives them, and next() after the last key.
return { proto = { "LIST" }, eval = function(args)
  local set = {}
  for _, v in ipairs(args[1]) do set[v] = true end
  set[3] = true
  set[true] = true
  local out = cf2.list()
  for k in next, set do out[#out + 1] = tostring(k) end
  local first = next(set)
  out[#out + 1] = "first " .. tostring(first)
  out[#out + 1] = "after true " .. tostring(next(set, true))
  out[#out + 1] = "empty " .. tostring(next({}))
  return out
end }
