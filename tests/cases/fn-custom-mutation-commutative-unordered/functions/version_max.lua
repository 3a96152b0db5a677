local function parts(v)
  local t = {}
  for p in tostring(v):gmatch("[^.]+") do t[#t + 1] = tonumber(p) end
  return t
end
local function less(a, b)
  local x, y = parts(a), parts(b)
  for i = 1, math.max(#x, #y) do
    if (x[i] or 0) ~= (y[i] or 0) then return (x[i] or 0) < (y[i] or 0) end
  end
  return false
end
return {
  commutative = true,
  mutate = function(top, lower)
    local best = lower
    for _, v in ipairs(top) do
      if best == nil or less(best, v) then best = v end
    end
    return best
  end,
}
