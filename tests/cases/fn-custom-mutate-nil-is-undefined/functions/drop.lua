return { commutative = true, mutate = function(top, lower, ctx) return nil end }
