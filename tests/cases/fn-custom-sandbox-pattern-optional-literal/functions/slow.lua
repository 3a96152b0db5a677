-- `a*` before `b*` is not held to one length: `b*` can match nothing, so the pattern
-- backtracks over every split of the run of a's (n^4 steps), and is refused.
return { proto = { "NUMBER" }, eval = function(args)
  local s = ("a"):rep(args[1])
  return tostring(s:find("a*b*a*b*a*b*a*c"))
end }
