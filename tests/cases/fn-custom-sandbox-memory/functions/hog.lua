return {
  proto = {},
  eval = function()
    local t = {}
    for i = 1, 1e9 do t[i] = string.rep("x", 100) .. i end
  end,
}
