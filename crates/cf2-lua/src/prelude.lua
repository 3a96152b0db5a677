-- The cf2 sandbox: run once in every new Lua state, before the module (docs/functions.md).
-- It removes everything that reaches outside the state, makes the instruction limit and
-- the evaluator's errors impossible to catch, bounds the work of library functions that
-- loop in C, and defines the `cf2` helper library.
-- Its arguments are functions written in Rust:
--   fatal_check(caught)   the error that ends the call, if there is one (the instruction
--                         limit once spent, or an error of h:eval()), and true if it is
--                         `caught` (a pcall's error) with its place in front;
--   fatal()               true if there is one;
--   charge(n)             counts n instructions of work done in C; the "too many
--                         instructions" message if that spends the budget, else nil;
--   pattern_check(s, p, r, plain)
--                         a message if matching pattern p on s (with the replacement r,
--                         or as plain text) could take too long, else nil.
local fatal_check, fatal, charge, pattern_check = ...

local error, setmetatable, getmetatable, rawget, rawset, type, tostring, next =
  error, setmetatable, getmetatable, rawget, rawset, type, tostring, next
local sort = table.sort

local SANDBOX = " is not available: cf2 functions run in a sandbox, without files, processes, the network or the clock"

local function unavailable(name, why)
  return function()
    error(name .. (why or SANDBOX), 2)
  end
end

local function unavailable_lib(lib)
  return setmetatable({}, {
    __index = function(_, k)
      error(lib .. "." .. tostring(k) .. SANDBOX, 2)
    end,
    __newindex = function()
      error(lib .. SANDBOX, 2)
    end,
    __metatable = false,
  })
end

io = unavailable_lib("io")
os = unavailable_lib("os")
package = unavailable_lib("package")
debug = unavailable_lib("debug")
coroutine = unavailable_lib("coroutine")
require = unavailable("require")
dofile = unavailable("dofile")
loadfile = unavailable("loadfile")
load = unavailable("load")
collectgarbage = unavailable("collectgarbage")
warn = unavailable("warn", " is not available: use ctx:warn(message)")
print = unavailable("print", " is not available: use ctx:warn(message) to report something")
string.dump = unavailable("string.dump")
local DETERMINISTIC = " is not available: a function's result must depend only on its arguments"
math.random = unavailable("math.random", DETERMINISTIC)
math.randomseed = unavailable("math.randomseed", DETERMINISTIC)

-- The instruction limit and the evaluator's errors cannot be caught: once one is raised,
-- pcall and xpcall re-raise it.
-- Lua runs some code with the instruction hook off, where an endless loop could not be
-- stopped: a message handler called for an error raised by the hook (so xpcall skips the
-- handler once the limit is spent), and finalizers (so __gc is refused).
local pcall_, xpcall_, setmetatable_ = pcall, xpcall, setmetatable
local function checked(ok, ...)
  local fatal_error, placed = fatal_check(not ok and (...) or nil)
  if fatal_error then
    -- Unplaced, it is raised at the pcall (this function is tail-called from it).
    error(fatal_error, placed and 0 or 2)
  end
  return ok, ...
end
pcall = function(...)
  return checked(pcall_(...))
end
xpcall = function(f, handler, ...)
  if type(handler) ~= "function" then
    return checked(xpcall_(f, handler, ...))
  end
  return checked(xpcall_(f, function(e)
    if fatal() then
      return e
    end
    return handler(e)
  end, ...))
end
_ENV.setmetatable = function(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("__gc metamethods are not available in cf2 functions (finalizers run where the instruction limit cannot stop them)", 2)
  end
  return setmetatable_(t, mt)
end

-- Pattern matching runs in C, where the instruction limit cannot stop it: a match whose
-- worst case is too long for its subject is refused before it starts.
local find, match, gmatch, gsub, rep = string.find, string.match, string.gmatch, string.gsub, string.rep
local function bounded(s, p, r, plain)
  local refused = pattern_check(s, p, r, plain)
  if refused then
    error(refused, 3)
  end
end
string.find = function(s, p, init, plain)
  bounded(s, p, nil, plain and true or false)
  return find(s, p, init, plain)
end
string.match = function(s, p, init)
  bounded(s, p, nil, false)
  return match(s, p, init)
end
string.gmatch = function(s, p, init)
  bounded(s, p, nil, false)
  return gmatch(s, p, init)
end
string.gsub = function(s, p, r, n)
  bounded(s, p, r, false)
  return gsub(s, p, r, n)
end

-- Other library loops in C. string.rep copies its text n times: the memory limit bounds
-- that unless there is nothing to copy, and then the result is empty at once.
local tointeger, ult, select, format = math.tointeger, math.ult, select, string.format
string.rep = function(s, n, sep)
  if s == "" and (sep == nil or sep == "") and tointeger(n) then
    return ""
  end
  return rep(s, n, sep)
end

-- table.move runs e - f + 1 steps whatever the tables hold: they are charged first.
local move, insert, remove = table.move, table.insert, table.remove
local function charged(n, level)
  local spent = charge(n)
  if spent then
    error(spent, level + 1)
  end
end
table.move = function(a1, f, e, t, a2)
  local fi, ei = tointeger(f), tointeger(e)
  -- (e - f wraps around only where move itself refuses: too many elements.)
  if fi and ei and ei - fi > 0 then
    charged(ei - fi, 2)
  end
  return move(a1, f, e, t, a2)
end

-- table.insert and table.remove move the elements after a position, as many as `#t`
-- says: a `__len` metamethod can say anything. For a table with a metatable they run
-- here, in Lua, where every step is counted (as Lua's ltablib.c does them).
local function length(t)
  local n = tointeger(#t)
  if n == nil then
    error("object length is not an integer", 3)
  end
  return n
end
local function integer_arg(x, i, name)
  local n = tointeger(x)
  if n == nil then
    local why = type(x) == "number" and "number has no integer representation"
      or ("number expected, got " .. (x == nil and "no value" or type(x)))
    error(format("bad argument #%d to '%s' (%s)", i, name, why), 3)
  end
  return n
end
table.insert = function(t, ...)
  if type(t) ~= "table" or getmetatable(t) == nil then
    return insert(t, ...)
  end
  local e = length(t) + 1
  local n = select("#", ...)
  if n == 1 then
    t[e] = ...
    return
  elseif n ~= 2 then
    error("wrong number of arguments to 'insert'", 2)
  end
  local pos, v = ...
  pos = integer_arg(pos, 2, "insert")
  if not ult(pos - 1, e) then
    error("bad argument #2 to 'insert' (position out of bounds)", 2)
  end
  local i = e
  while i > pos do
    t[i] = t[i - 1]
    i = i - 1
  end
  t[pos] = v
end
table.remove = function(t, ...)
  if type(t) ~= "table" or getmetatable(t) == nil then
    return remove(t, ...)
  end
  local size = length(t)
  local pos = size
  if select("#", ...) > 0 and (...) ~= nil then
    pos = integer_arg((...), 2, "remove")
  end
  if pos ~= size and ult(size, pos - 1) then
    error("bad argument #2 to 'remove' (position out of bounds)", 2)
  end
  local result = t[pos]
  while pos < size do
    t[pos] = t[pos + 1]
    pos = pos + 1
  end
  t[pos] = nil
  return result
end

-- table.sort reads and writes the elements `#t` says there are. A plain table holds them
-- all, so the memory limit bounds the sort; with a metatable, `__len` can say anything and
-- a C function as `__index` answers every read without a counted instruction. The sort of
-- such a table is charged for its comparisons (n log2 n) before it starts.
table.sort = function(t, comp)
  if type(t) == "table" and getmetatable(t) ~= nil then
    local n = length(t)
    local log, m = 1, n
    while m > 1 do
      m = m // 2
      log = log + 1
    end
    if n > 1 then
      charged(n < (1 << 62) // log and n * log or (1 << 62), 2)
    end
  end
  return sort(t, comp)
end

-- table.concat joins the elements i..j (j: `#t`) in C. A plain table must hold them all,
-- so the memory limit bounds it; with a metatable, `__len` can say anything and a C
-- function as `__index` answers every read without a counted instruction: charged first.
local concat, maxinteger = table.concat, math.maxinteger
table.concat = function(t, sep, i, j)
  if type(t) == "table" and getmetatable(t) ~= nil then
    local first = tointeger(i == nil and 1 or i)
    local last = tointeger(j == nil and #t or j)
    if first and last and last > first then
      local n = last - first
      if n < 0 then
        n = maxinteger -- wrapped around: more than can ever be done
      end
      charged(n, 2)
    end
  end
  return concat(t, sep, i, j)
end

-- A function's result must depend only on its arguments (docs/functions.md), so nothing
-- may show where the allocator put a value, or the order of Lua's hash table, which is
-- seeded with addresses: `tostring` of a table or function says only its kind (or its
-- `__tostring`), `string.format` shows such values the same way and has no `%p`, and
-- `pairs` visits the keys of a table in a fixed order (numbers, then text, then booleans;
-- each in increasing order; keys of other kinds last, in Lua's order).
local rawtostring, find, gsub_, unpack = tostring, string.find, string.gsub, table.unpack
local function addressed(v)
  local t = type(v)
  return t == "table" or t == "function" or t == "thread" or t == "userdata"
end
local function shown(v)
  local s = rawtostring(v)
  if addressed(v) then
    local mt = getmetatable(v)
    if type(mt) ~= "table" or rawget(mt, "__tostring") == nil then
      s = gsub_(s, ": 0?x?%x+$", "")
    end
  end
  return s
end
_ENV.tostring = shown
string.format = function(fmt, ...)
  if type(fmt) == "string" and find(fmt, "%%[-+ #0-9.]*p") then
    error("bad argument #1 to 'format' (`%p` shows an address, which a cf2 function must not depend on)", 2)
  end
  local n = select("#", ...)
  local args = { ... }
  for k = 1, n do
    if addressed(args[k]) then
      args[k] = shown(args[k])
    end
  end
  return format(fmt, unpack(args, 1, n))
end
local rawpairs = pairs
-- The iterator of `pairs` over table `t`, visiting `keys` in turn.
local function in_turn(t, keys)
  local i = 0
  return function()
    i = i + 1
    local k = keys[i]
    if k ~= nil then
      return k, rawget(t, k)
    end
  end, t, nil
end
local KIND_ORDER = { number = 1, string = 2, boolean = 3 }
local function key_before(a, b)
  local ka, kb = KIND_ORDER[type(a)] or 4, KIND_ORDER[type(b)] or 4
  if ka ~= kb then
    return ka < kb
  end
  if ka == 1 or ka == 2 then
    return a < b
  end
  if ka == 3 then
    return (not a) and b
  end
  return false
end
-- The keys of table `t` in that fixed order.
local function sorted_keys(t)
  local keys = {}
  for k in next, t do
    keys[#keys + 1] = k
  end
  sort(keys, key_before)
  return keys
end
_ENV.pairs = function(t)
  local mt = getmetatable(t)
  if type(t) ~= "table" or (type(mt) == "table" and rawget(mt, "__pairs") ~= nil) then
    return rawpairs(t)
  end
  return in_turn(t, sorted_keys(t))
end

-- `next` walks a table in the same fixed order as `pairs`: the keys are sorted when a walk
-- starts (`next(t)` or `next(t, nil)`) and kept, weakly, until the next start. A key the
-- walk does not know (added during it, which Lua leaves undefined, or no key at all) is
-- passed to Lua's own `next`, which says what is wrong with it.
local WALKS = setmetatable({}, { __mode = "k" })
_ENV.next = function(t, k)
  if type(t) ~= "table" then
    return next(t, k)
  end
  local walk = WALKS[t]
  if k == nil or walk == nil then
    local keys, at = sorted_keys(t), {}
    for i = 1, #keys do
      at[keys[i]] = i
    end
    walk = { keys = keys, at = at }
    WALKS[t] = walk
  end
  local i = 0
  if k ~= nil then
    i = walk.at[k]
    if i == nil then
      return next(t, k)
    end
  end
  local keys = walk.keys
  for j = i + 1, #keys do
    local key = keys[j]
    local v = rawget(t, key)
    if v ~= nil then
      return key, v
    end
  end
  return nil
end

-- Values: lists and blocks are tables marked by a metatable; a block remembers the order
-- in which its members were added (ORDER[block] lists the names).
local ORDER = setmetatable({}, { __mode = "k" })
local BLOCK = { __name = "cf2.block" }
local LIST = { __name = "cf2.list" }
local STRING = { __name = "cf2.string" }
local REGEX = { __name = "cf2.regex" }

local function block_keys(t)
  local order, seen, keys = ORDER[t] or {}, {}, {}
  for i = 1, #order do
    local k = order[i]
    if not seen[k] and rawget(t, k) ~= nil then
      seen[k] = true
      keys[#keys + 1] = k
    end
  end
  local extra = {}
  for k in next, t do
    if not seen[k] then
      extra[#extra + 1] = k
    end
  end
  sort(extra, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for i = 1, #extra do
    keys[#keys + 1] = extra[i]
  end
  return keys
end

BLOCK.__newindex = function(t, k, v)
  rawset(t, k, v)
  if v ~= nil then
    local order = ORDER[t]
    order[#order + 1] = k
  end
end
BLOCK.__pairs = function(t)
  return in_turn(t, block_keys(t))
end
STRING.__tostring = function(s)
  return rawget(s, "text")
end
STRING.__concat = function(a, b)
  return tostring(a) .. tostring(b)
end
STRING.__len = function(s)
  return #rawget(s, "text")
end
REGEX.__tostring = function(r)
  return rawget(r, "pattern")
end

local function is_sequence(t)
  local n = 0
  for _ in next, t do
    n = n + 1
  end
  for i = 1, n do
    if rawget(t, i) == nil then
      return false
    end
  end
  return true
end

local function typeof(v)
  local t = type(v)
  if t == "nil" then
    return "undef"
  elseif t == "boolean" then
    return "bool"
  elseif t == "number" then
    return "number"
  elseif t == "string" then
    return "literal"
  elseif t == "table" then
    local mt = getmetatable(v)
    if mt == BLOCK then
      return "block"
    elseif mt == LIST then
      return "list"
    elseif mt == STRING then
      return "string"
    elseif mt == REGEX then
      return "regex"
    end
    return is_sequence(v) and "list" or "block"
  end
  return t
end

local function keys(t)
  if getmetatable(t) == BLOCK then
    return setmetatable(block_keys(t), LIST)
  end
  local ks = {}
  for k in next, t do
    ks[#ks + 1] = k
  end
  sort(ks, function(a, b)
    return tostring(a) < tostring(b)
  end)
  return setmetatable(ks, LIST)
end

cf2 = {
  -- An empty block, or a block holding the members of `init`: in its order if it is a
  -- block, else sorted by name. Members added later keep the order they are added in.
  block = function(init)
    local b = setmetatable({}, BLOCK)
    ORDER[b] = {}
    if init ~= nil then
      local ks = keys(init)
      for i = 1, #ks do
        b[ks[i]] = init[ks[i]]
      end
    end
    return b
  end,
  -- Marks a table as a list (so that an empty one is a list, not a block).
  list = function(t)
    return setmetatable(t or {}, LIST)
  end,
  -- Text of kind string (double-quoted) rather than literal.
  string = function(s)
    return setmetatable({ text = tostring(s) }, STRING)
  end,
  regex = function(p)
    return setmetatable({ pattern = tostring(p) }, REGEX)
  end,
  typeof = typeof,
  keys = keys,
}

-- The context of a call and unevaluated (NOEVAL) arguments; `_d` is the call's link to
-- the evaluator, valid only during the call.
-- The fields name, file, line, column and resource are fetched when first read.
local CTX = { __name = "cf2.context" }
local CTX_METHODS = {}
local CTX_FIELDS = { name = true, file = true, line = true, column = true, resource = true }
CTX.__index = function(t, k)
  local m = CTX_METHODS[k]
  if m ~= nil then
    return m
  end
  if CTX_FIELDS[k] then
    local v = rawget(t, "_d")(0, k)
    rawset(t, k, v)
    return v
  end
end
function CTX_METHODS:lookup(path)
  return self._d(1, path)
end
function CTX_METHODS:warn(message)
  return self._d(2, tostring(message))
end
local ARG = { __name = "cf2.argument" }
ARG.__index = ARG
function ARG:eval()
  return self._d(3, self.index)
end

-- How cf2 calls a module's functions: with a new context for the call.
return {
  ORDER = ORDER, BLOCK = BLOCK, LIST = LIST, STRING = STRING, REGEX = REGEX, ARG = ARG,
  CTX = CTX,
  call_eval = function(eval, d, args)
    return eval(args, setmetatable({ _d = d }, CTX))
  end,
  call_mutate = function(mutate, d, top, lower)
    return mutate(top, lower, setmetatable({ _d = d }, CTX))
  end,
}
