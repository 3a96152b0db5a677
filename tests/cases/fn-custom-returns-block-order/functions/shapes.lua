return {
  proto = {},
  eval = function()
    local ordered = cf2.block()
    ordered.zeta = 1
    ordered.alpha = 2
    ordered.mid = 3
    return {
      sorted = { b = 1, a = 2, c = { 1, 2 } },
      ordered = ordered,
      empty = {},
      empty_block = cf2.block(),
    }
  end,
}
