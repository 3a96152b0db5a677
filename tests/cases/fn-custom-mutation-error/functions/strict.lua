return {
  mutate = function(top, lower)
    if type(lower) ~= "number" then error("needs a number below, got " .. cf2.typeof(lower), 0) end
    return lower + top[1]
  end,
}
