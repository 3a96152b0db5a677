-- Reference §6.2's Mutate($em, $ms, $ctx, $name): `top` holds the evaluated highest-priority
-- definitions, `lower` the value of everything below them, `ctx.resource` the resource.
return {
  commutative = false,
  mutate = function(top, lower, ctx)
    local t = {}
    for _, v in ipairs(top) do t[#t + 1] = tostring(v) end
    return ctx.resource .. ":" .. table.concat(t, "+") .. "<" .. tostring(lower or "nothing")
  end,
}
