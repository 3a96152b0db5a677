return {
  proto = { "SCALAR", "SCALAR", "SCALAR", "SCALAR", "SCALAR", "LIST", "BLOCK", "UNDEF" },
  eval = function(args) return args.types end,
}
