return { proto = {}, eval = function() print("hello") return 1 end }
