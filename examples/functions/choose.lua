-- choose(CONDITION, A, B): A if CONDITION is true, else B. Only the argument chosen is
-- evaluated (the parameters are NOEVAL), like `if (...) then A else B`.
--
--   Port => choose($Secure, 443, fail('no port without TLS'))

return {
  proto = { "BOOL", "ANYTYPE|UNDEF|NOEVAL", "ANYTYPE|UNDEF|NOEVAL" },
  eval = function(args)
    if args[1] then
      return args[2]:eval()
    end
    return args[3]:eval()
  end,
}
