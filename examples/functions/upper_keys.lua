-- upper_keys(BLOCK): the block with its member names in upper case, in the same order.
--
--   Env => upper_keys({ path => '/bin', home => '/root' })   // { PATH => '/bin', HOME => '/root' }

return {
  proto = { "BLOCK" },
  eval = function(args)
    local out = cf2.block()
    for name, value in pairs(args[1]) do
      out[name:upper()] = value
    end
    return out
  end,
}
