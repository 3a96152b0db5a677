return { proto = {}, eval = function() return cf2.block({ Port = 80, Host = "www" }) end }
