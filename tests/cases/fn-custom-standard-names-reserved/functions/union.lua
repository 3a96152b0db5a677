return { mutate = function() return "module" end }
