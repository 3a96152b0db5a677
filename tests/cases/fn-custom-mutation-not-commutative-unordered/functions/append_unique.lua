-- Appends the top list to the lower one, skipping elements already there (not commutative).
return {
  mutate = function(top, lower)
    local out, seen = cf2.list(), {}
    for _, v in ipairs(lower or {}) do out[#out + 1] = v; seen[v] = true end
    for _, v in ipairs(top[1]) do if not seen[v] then out[#out + 1] = v; seen[v] = true end end
    return out
  end,
}
