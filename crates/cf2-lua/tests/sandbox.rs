//! The sandbox: no way out of the Lua state, bounded instructions, memory and pattern
//! matching; a broken or hostile module ends the compile with an error, never a hang.

mod common;
use cf2_lua::Limits;
use common::{has, setup, value};
use std::time::{Duration, Instant};

fn call(body: &str) -> String {
    format!("return {{ proto = {{}}, eval = function(args, ctx)\n{body}\nend }}")
}

fn small() -> Limits {
    Limits {
        instructions: 2_000_000,
        memory: 8 * 1024 * 1024,
        ..Limits::default()
    }
}

/// `X => f()` with `f` doing `body`, under the small limits.
fn calling(body: &str) -> common::Setup {
    setup()
        .limits(small())
        .module("f.lua", &call(body))
        .file("main.cf2", "X => f()\n")
}

/// Compiles `X => f()` with `f` doing `body`; the rendered configuration.
fn gives(body: &str) -> String {
    calling(body).ok()
}

/// Compiles `X => f()` with `f` doing `body`; the rendered error.
fn fails(body: &str) -> String {
    let s = calling(body);
    let start = Instant::now();
    let e = s.err();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    e
}

#[test]
fn an_endless_loop_is_stopped() {
    let e = fails("local n = 0\nwhile true do n = n + 1 end");
    has(
        &e,
        &[
            "`f` failed: ",
            "f.lua:3: the function ran for more than 2000000 Lua instructions, the limit (an endless loop?)",
        ],
    );
}

#[test]
fn the_instruction_limit_cannot_be_caught() {
    for body in [
        "while true do pcall(function() while true do end end) end",
        "while true do xpcall(function() while true do end end, function(e) return e end) end",
        "while true do xpcall(function() while true do end end, function(e) while true do end end) end",
        "local function f() pcall(f) pcall(f) end\nwhile true do pcall(f) end",
        "while true do pcall(error, 'x') end",
    ] {
        has(&fails(body), &["the function ran for more than 2000000 Lua instructions"]);
    }
}

/// 20 calls (`X0 => f()` ...) of about 500,000 instructions each, under the small limits.
fn twenty_calls() -> common::Setup {
    let module = call("local n = 0\nfor i = 1, 100000 do n = n + i end\nreturn n");
    let mut text = String::new();
    for i in 0..20 {
        text.push_str(&format!("X{i} => f()\n"));
    }
    setup()
        .limits(small())
        .module("f.lua", &module)
        .file("main.cf2", &text)
}

#[test]
fn the_limit_is_per_call() {
    // Each call is within the limit.
    assert!(twenty_calls().run().is_ok());
}

#[test]
fn all_calls_together_are_bounded_by_the_compile_budget() {
    // Each call is within its own limit, but a configuration can make very many calls
    // (macros calling macros double them at each level): together they count against
    // the compile's budget of evaluation steps, one step per 20 Lua instructions.
    let s = twenty_calls();
    let mut compiler = s.compiler();
    compiler.options_mut().max_steps = Some(200_000);
    let e = match compiler.compile_file("main.cf2") {
        Ok(_) => panic!("the compile succeeded"),
        Err(e) => e.render(false),
    };
    has(
        &e,
        &[
            "`f` failed: ",
            "f.lua: the compile needs more than 200000 evaluation steps, counting the work of custom functions",
        ],
    );
    // The same calls within a budget that holds them all.
    let mut compiler = s.compiler();
    compiler.options_mut().max_steps = Some(5_000_000);
    assert!(compiler.compile_file("main.cf2").is_ok());
}

#[test]
fn a_loop_while_loading_is_stopped() {
    let s = setup()
        .limits(small())
        .module("f.lua", "while true do end")
        .file("main.cf2", "X => f()\n");
    has(
        &s.err(),
        &["cannot load the function `f`", "the function ran for more than 2000000 Lua instructions, the limit (an endless loop?) while loading"],
    );
}

#[test]
fn memory_is_bounded() {
    for body in [
        "return string.rep('x', 1e9)",
        "local t = {}\nfor i = 1, 1e9 do t[i] = i end",
        "local s = 'x'\nwhile true do s = s .. s end",
        "local t = {}\nwhile true do t[#t + 1] = {} end",
        "return table.concat({ string.rep('x', 4e6), string.rep('y', 4e6) })",
    ] {
        has(
            &fails(body),
            &[
                "`f` failed: ",
                "f.lua: the module used more than 8 MiB of memory, the limit",
            ],
        );
    }
}

#[test]
fn memory_errors_caught_by_the_module_are_its_business() {
    assert_eq!(
        gives("local ok = pcall(string.rep, 'x', 1e9)\nreturn ok and 'big' or 'refused'"),
        value("X => refused\n")
    );
}

#[test]
fn nothing_reaches_outside_the_state() {
    for (body, what) in [
        (
            "return io.open('/etc/passwd'):read('a')",
            "io.open is not available: cf2 functions run in a sandbox",
        ),
        ("return io.read()", "io.read is not available"),
        (
            "local x = io.stdout\nreturn 1",
            "io.stdout is not available",
        ),
        (
            "local r = os.execute('touch /tmp/cf2-pwned')\nreturn r",
            "os.execute is not available",
        ),
        ("local t = os.time()\nreturn t", "os.time is not available"),
        (
            "local t = os.getenv('HOME')\nreturn t",
            "os.getenv is not available",
        ),
        (
            "local r = os.remove('/tmp/x')\nreturn r",
            "os.remove is not available",
        ),
        (
            "local m = require('socket')\nreturn m",
            "require is not available",
        ),
        (
            "local f = load('return 1')\nreturn f()",
            "load is not available",
        ),
        (
            "local f = loadfile('/etc/passwd')\nreturn f",
            "loadfile is not available",
        ),
        (
            "local f = dofile('/etc/passwd')\nreturn f",
            "dofile is not available",
        ),
        (
            "local i = debug.getinfo(1)\nreturn i",
            "debug.getinfo is not available",
        ),
        (
            "local p = package.loaded\nreturn p",
            "package.loaded is not available",
        ),
        (
            "local c = coroutine.create(print)\nreturn c",
            "coroutine.create is not available",
        ),
        (
            "print('to stdout')\nreturn 1",
            "print is not available: use ctx:warn(message)",
        ),
        ("warn('@on')\nreturn 1", "warn is not available"),
        (
            "collectgarbage('stop')\nreturn 1",
            "collectgarbage is not available",
        ),
        (
            "local d = string.dump(function() end)\nreturn d",
            "string.dump is not available",
        ),
        (
            "local r = math.random()\nreturn r",
            "math.random is not available: a function's result must depend only on its arguments",
        ),
        (
            "math.randomseed(1)\nreturn 1",
            "math.randomseed is not available",
        ),
        ("io.open = 1\nreturn 1", "io is not available"),
    ] {
        let e = fails(body);
        has(&e, &["`f` failed: ", what]);
    }
    assert!(!std::path::Path::new("/tmp/cf2-pwned").exists());
}

#[test]
fn the_stubs_give_the_line_of_the_call() {
    has(
        &fails("\n\nlocal f = io.open('x')\nreturn f"),
        &["f.lua:4: io.open is not available"],
    );
    // A tail call loses the line: the file is still named.
    has(
        &fails("return require('x')"),
        &["f.lua: require is not available"],
    );
}

#[test]
fn pattern_matching_is_bounded() {
    for body in [
        "local i = string.rep('a', 10000):find('.-.-.-.-b')\nreturn i",
        "local m = string.match(string.rep('a', 100000), 'a*a*b')\nreturn m",
        "for w in string.gmatch(string.rep('a', 3000), '.-.-.-x') do end\nreturn 1",
        "local s = string.gsub(string.rep('a', 100000), 'a*b', '')\nreturn s",
        "local i = string.rep('a', 50):find(string.rep('a?', 50) .. string.rep('a', 50))\nreturn i",
    ] {
        has(&fails(body), &["could take too long on text of", "refused"]);
    }
    // Ordinary patterns on long text are fine.
    assert_eq!(
        gives("local s = string.rep('key = value\\n', 20000)\nlocal n = 0\nfor k, v in s:gmatch('(%w+) = (%w+)') do n = n + 1 end\nlocal ip = ('10.1.2.3/24'):match('^(%d+)%.(%d+)%.(%d+)%.(%d+)/(%d+)$')\nlocal t = s:gsub('%s+', ' '):sub(1, 9)\nreturn { n = n, ip = ip, t = t, plain = (s:find('.-.-.-x', 1, true)) }"),
        value("X => { ip => '10', n => 20000, t => 'key = val' }\n")
    );
}

#[test]
fn modules_do_not_share_their_state() {
    let s = setup()
        .module(
            "evil.lua",
            &call("string.upper = function() return 'hacked' end\ncf2.block = nil\nreturn 1"),
        )
        .module(
            "good.lua",
            &call("return { u = ('x'):upper(), b = cf2.typeof(cf2.block()) }"),
        )
        .file("main.cf2", "A => evil()\nB => good()\n");
    assert_eq!(s.ok(), value("A => 1\nB => { b => block, u => X }\n"));
}

#[test]
fn runaway_recursion_in_lua_is_an_error() {
    has(
        &fails("local function f(n) return 1 + f(n + 1) end\nreturn f(1)"),
        &["`f` failed: "],
    );
}

#[test]
fn deep_recursion_through_lookups_is_an_error_not_a_crash() {
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!("R{i} => next(R{})\n", i + 1));
    }
    text.push_str("R400 => 0\n");
    let s = setup()
        .module(
            "next.lua",
            "return { proto = { 'TEXT' }, eval = function(args, ctx) return ctx:lookup(args[1]) + 1 end }",
        )
        .file("main.cf2", &text);
    match s.run() {
        Ok(v) => assert_eq!(
            v.get_path("R0"),
            Some(&cf2::Value::Number(cf2::Number::Int(400)))
        ),
        Err(e) => has(&e, &["`next` failed: "]),
    }
}

#[test]
fn a_context_kept_after_the_call_is_useless() {
    let s = setup()
        .module(
            "keep.lua",
            "local kept\nreturn { proto = {}, eval = function(args, ctx)\n  if kept then return kept:lookup('A') end\n  kept = ctx\n  return 1\nend }",
        )
        .file("main.cf2", "A => keep()\nB => keep()\n");
    has(&s.err(), &["`keep` failed: "]);
}

#[test]
fn finalizers_are_refused() {
    // Finalizers run with the instruction hook off, so a looping one could not be stopped.
    has(
        &fails("setmetatable({}, { __gc = function() while true do end end })\nreturn 1"),
        &["f.lua:2: __gc metamethods are not available in cf2 functions"],
    );
    // Other metamethods are fine, and run under the limit.
    has(
        &fails("local t = setmetatable({}, { __index = function(t, k) while true do end end })\nreturn t.x"),
        &["the function ran for more than 2000000 Lua instructions"],
    );
}

#[test]
fn odd_error_values_are_reported() {
    has(&fails("error({ code = 1 })"), &["`f` failed: "]);
    has(
        &fails("error(setmetatable({}, { __tostring = function() return 'custom' end }))"),
        &["custom"],
    );
    has(&fails("error(nil)"), &["`f` failed: "]);
}

#[test]
fn a_big_result_within_the_limits_is_fine() {
    let s = setup()
        .module(
            "many.lua",
            &call("local t = {}\nfor i = 1, 100000 do t[i] = i end\nreturn t"),
        )
        .file("main.cf2", "X => sum(many())\n");
    assert_eq!(s.ok(), value("X => 5000050000\n"));
}

#[test]
fn to_be_closed_variables_cannot_outlive_the_limit() {
    // When the limit stops a function that holds a to-be-closed variable, unwinding runs
    // its `__close`; an endless loop there must be stopped too (it once ran uncounted).
    let close = "setmetatable({}, { __close = function() while true do end end })";
    for body in [
        format!("local x <close> = {close}\nwhile true do end"),
        format!("local x <close> = {close}\nreturn 1"),
        format!("local x <close> = {close}\nerror('boom')"),
        format!("local ok = pcall(function()\n  local x <close> = {close}\n  while true do end\nend)\nreturn 1"),
        format!("for _ in next, {{ 1 }}, nil, {close} do\n  while true do end\nend"),
        format!("table.sort({{ 3, 2, 1 }}, function(a, b)\n  local x <close> = {close}\n  while true do end\nend)"),
    ] {
        has(&fails(&body), &["the function ran for more than 2000000 Lua instructions"]);
    }
}

#[test]
fn library_loops_in_c_are_bounded() {
    // Library functions whose loop runs in C, where the instruction count cannot stop it,
    // are charged for it (table.move), or run in Lua when metamethods could make a table
    // look endless (table.insert and table.remove with `__len`).
    let endless = "setmetatable({}, { __len = function() return math.maxinteger - 1 end })";
    for body in [
        "table.move({}, 1, math.maxinteger - 1, 2)\nreturn 1".to_string(),
        "local ok = pcall(table.move, {}, 1, math.maxinteger - 1, 2)\nreturn 1".to_string(),
        "table.move({}, '1', tostring(math.maxinteger - 1), 2)\nreturn 1".to_string(),
        format!("table.insert({endless}, 1, 'x')\nreturn 1"),
        format!("table.remove({endless}, 1)\nreturn 1"),
        // A C function as `__index` reads without a counted instruction: the sort is
        // charged before it starts.
        "local t = setmetatable({}, { __len = function() return 2147483646 end, __index = rawlen }); table.sort(t)\nreturn 1".to_string(),
        "local t = setmetatable({}, { __len = function() return 2147483646 end, __index = rawlen }); local ok = pcall(table.sort, t)\nreturn 1".to_string(),
    ] {
        // The place is the module's, not the sandbox's loop, also when pcall re-raises.
        has(
            &fails(&body),
            &["f.lua:2: the function ran for more than 2000000 Lua instructions"],
        );
    }
    // Sorting a table with a metatable still works.
    let sorted = "local l = cf2.list({ 3, 1, 2 })\ntable.sort(l)\ntable.sort(l, function(a, b) return a > b end)\nreturn l";
    assert_eq!(gives(sorted), value("X => [3, 2, 1]\n"));
    // A plain find costs the length of the text times the length of what is sought, and
    // a `%0` in a replacement is copied at every match: both are refused like a pattern.
    for body in [
        "local s = string.rep('a', 1000000)\nreturn (string.find(s, string.rep('a', 5000) .. 'b', 1, true))",
        "local s = string.rep('a', 1000000)\nreturn (string.gsub(s, '', string.rep('%0', 5000)))",
    ] {
        has(&fails(body), &["could take too long on text of 1000000 bytes", "refused"]);
    }
    // Repeating nothing gives nothing at once; ordinary uses work as before.
    assert_eq!(
        gives(r#"local l = cf2.list({})
table.insert(l, 'b')
table.insert(l, 1, 'a')
table.insert(l, 'c')
table.insert(l, 'd')
local removed = table.remove(l, 2) .. table.remove(l)
return {
  rep = #string.rep('', math.maxinteger) + #string.rep('', math.maxinteger, ''),
  abab = string.rep('a', 2, 'b'),
  moved = table.concat(table.move({ 'x', 'y', 'z' }, 1, 3, 2), ''),
  found = (string.find(string.rep('ab', 1000) .. 'c', 'abc', 1, true)),
  list = l,
  removed = removed,
}"#),
        value("X => { abab => aba, found => 1999, list => [a, c], moved => xxyz, removed => bd, rep => 0 }\n")
    );
}
