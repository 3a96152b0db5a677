return {
  proto = { "NOEVAL" },
  eval = function(args)
    local h = args[1]
    return { kind = h.kind, source = h.source, file = h.file, line = h.line,
             column = h.column, value = h:eval() }
  end,
}
