-- Where a table lives: an address, which differs from run to run.
return { proto = {}, eval = function() return string.format("%p", {}) end }
