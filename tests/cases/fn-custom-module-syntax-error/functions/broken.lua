return {
  proto = {},
  eval = function(
}
