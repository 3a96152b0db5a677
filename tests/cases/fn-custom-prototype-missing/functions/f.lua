return { eval = function() return 1 end }
