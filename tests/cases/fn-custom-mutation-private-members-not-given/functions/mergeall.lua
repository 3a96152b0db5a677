return {
  commutative = true,
  mutate = function(top, lower, ctx)
    local r = {}
    if lower then for k, v in pairs(lower) do r[k] = v end end
    for _, b in ipairs(top) do for k, v in pairs(b) do r[k] = v end end
    return r
  end,
}
