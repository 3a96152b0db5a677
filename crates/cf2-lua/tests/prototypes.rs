//! Prototypes (reference §6.1): the types and number of arguments checked before the call,
//! `NOEVAL` arguments, and modules whose declaration is wrong.

mod common;
use common::{calling, has, setup, value};

fn typed(proto: &str) -> String {
    format!("return {{ proto = {{ {proto} }}, eval = function(args) return args.types end }}")
}

#[test]
fn the_number_of_arguments_is_checked() {
    let s = setup()
        .module("two.lua", &typed("'NUMBER', 'NUMBER'"))
        .file("main.cf2", "X => two(1)\n");
    has(
        &s.err(),
        &[
            "main.cf2:1:6: error: `two` takes 2 arguments, but 1 was given",
            "is declared `two(NUMBER, NUMBER)`",
        ],
    );
    let s = setup()
        .module("none.lua", &typed(""))
        .file("main.cf2", "X => none(1, 2)\n");
    has(&s.err(), &["`none` takes 0 arguments, but 2 were given"]);
}

#[test]
fn each_type_accepts_its_kinds() {
    let cases: &[(&str, &str, bool)] = &[
        ("NUMBER", "1", true),
        ("NUMBER", "2.5", true),
        ("NUMBER", "'12'", true),
        ("NUMBER", "x", false),
        ("NUMBER", "true", false),
        ("LITERAL", "x", true),
        ("LITERAL", "'x y'", true),
        ("LITERAL", "\"x\"", false),
        ("STRING", "\"x\"", true),
        ("STRING", "x", false),
        ("TEXT", "x", true),
        ("TEXT", "\"x\"", true),
        ("BOOL", "false", true),
        ("BOOL", "'true'", false),
        ("REGEX", "/a/", true),
        ("REGEX", "a", false),
        ("SCALAR", "/a/", true),
        ("SCALAR", "1", true),
        ("SCALAR", "[1]", false),
        ("SCALAR", "{}", false),
        ("LIST", "[]", true),
        ("LIST", "{}", false),
        ("BLOCK", "{ a => 1 }", true),
        ("BLOCK", "[a]", false),
        ("UNDEF", "?", true),
        ("UNDEF", "1", false),
        ("ANYTYPE", "{}", true),
        ("ANYTYPE", "[]", true),
        ("ANYTYPE", "?", false),
        ("ANYTYPE|UNDEF", "?", true),
        ("NUMBER|BOOL", "true", true),
        ("NUMBER|BOOL", "x", false),
        ("number | list", "[1]", true),
    ];
    for (proto, arg, ok) in cases {
        let s = setup()
            .module("f.lua", &typed(&format!("'{proto}'")))
            .file("main.cf2", &format!("X => f({arg})\n"));
        match (s.run(), ok) {
            (Ok(_), true) => {}
            (Err(e), false) => has(&e, &["main.cf2:1:8: error: `f` needs ", "as argument 1"]),
            (r, _) => panic!("{proto} with {arg}: {r:?}"),
        }
    }
}

#[test]
fn a_type_error_points_at_the_argument() {
    let s = setup()
        .module("f.lua", &typed("'NUMBER', 'LIST|BLOCK'"))
        .file("main.cf2", "X => f(1,\n  abc)\n");
    has(
        &s.err(),
        &[
            "main.cf2:2:3: error: `f` needs a block or a list as argument 2, but its argument is 'abc'",
            "this is text",
            "the prototype of `f` declares `BLOCK|LIST` here",
        ],
    );
}

#[test]
fn arguments_are_evaluated_before_the_call() {
    // An error in an argument is reported as such; the module is not called.
    let s = setup()
        .module(
            "f.lua",
            "return { proto = { 'ANYTYPE' }, eval = function() error('called') end }",
        )
        .file("main.cf2", "X => f($Nope)\n");
    let e = s.err();
    has(&e, &["resource `Nope` is not defined"]);
    assert!(!e.contains("called"), "{e}");
}

const CHOOSE: &str = r#"
return {
  proto = { "BOOL", "ANYTYPE|UNDEF|NOEVAL", "NOEVAL" },
  eval = function(args)
    if args[1] then return args[2]:eval() end
    return args[3]:eval()
  end,
}
"#;

#[test]
fn noeval_arguments_are_evaluated_only_when_asked() {
    let s = setup().module("choose.lua", CHOOSE).file(
        "main.cf2",
        "A => choose(true, 1, fail('never'))\nB => choose(false, $Nope, [2])\nC => defined(choose(true, ?, 1))\n",
    );
    assert_eq!(s.ok(), value("A => 1\nB => [2]\nC => false\n"));
    let s = setup()
        .module("choose.lua", CHOOSE)
        .file("main.cf2", "A => choose(false, 1, fail('taken'))\n");
    has(&s.err(), &["main.cf2:1:23: error: taken"]);
}

#[test]
fn a_noeval_argument_is_a_handle_on_the_expression() {
    let s = setup()
        .module(
            "quote.lua",
            r#"
return {
  proto = { "NOEVAL", "ANYTYPE|NOEVAL" },
  eval = function(args)
    local a, b = args[1], args[2]
    local first = b:eval()
    local again = b:eval()
    return {
      kind = a.kind, source = a.source, file = a.file, line = a.line, column = a.column,
      argument = a.argument, types = args.types,
      value = a:eval(), same = first == again, second = b.kind,
    }
  end,
}
"#,
        )
        .file("main.cf2", "N => 2\nX => quote(\n  $N + 1, [a])\n");
    assert_eq!(
        s.ok(),
        value("N => 2\nX => { argument => 1, column => 3, file => 'main.cf2', kind => operator, line => 3, same => false, second => list, source => '$N + 1', types => [unevaluated, unevaluated], value => 3 }\n")
    );
}

#[test]
fn a_noeval_argument_is_checked_when_evaluated() {
    let s = setup()
        .module(
            "f.lua",
            "return { proto = { 'NUMBER|NOEVAL' }, eval = function(args) return args[1]:eval() end }",
        )
        .file("main.cf2", "X => f(abc)\n");
    has(
        &s.err(),
        &["main.cf2:1:8: error: `f` needs a number as argument 1, but its argument is 'abc'"],
    );
    let s = setup()
        .module(
            "f.lua",
            "return { proto = { 'NUMBER|NOEVAL' }, eval = function(args) return args[1]:eval() end }",
        )
        .file("main.cf2", "X => f('41') + 1\n");
    assert_eq!(s.ok(), value("X => 42\n"));
}

#[test]
fn a_handle_is_useless_after_the_call() {
    let s = setup()
        .module(
            "keep.lua",
            "local kept\nreturn { proto = { 'NOEVAL' }, eval = function(args)\n  if kept then return kept:eval() end\n  kept = args[1]\n  return 1\nend }",
        )
        .file("main.cf2", "X => keep(1)\nY => keep(2)\n");
    has(&s.err(), &["`keep` failed: "]);
}

#[test]
fn wrong_declarations_are_reported_at_the_call() {
    for (module, msg) in [
        ("return 1", "the module must return a table with `proto` and `eval`"),
        ("return { eval = function() end }", "the module has no `proto`"),
        ("return { proto = {}, eval = 1 }", "`eval` must be a function, not integer"),
        ("return { proto = {} }", "the module defines neither `eval` nor `mutate`"),
        ("return { proto = { 'NUMBERS' }, eval = function() end }", "`proto[1]`: `NUMBERS` is not an argument type"),
        ("return { proto = { 1 }, eval = function() end }", "`proto[1]` must be text"),
        ("return { proto = 'NUMBER', eval = function() end }", "`proto` must be a list of argument types"),
        ("return { proto = {}, eval = function() end, Eval = 1 }", "unknown field `Eval`"),
        ("return { proto = {}, eval = function() end, commutative = true }", "`commutative` is set but the module has no `mutate`"),
        ("return { proto = {}, eval = function() end, commutative = 'yes', mutate = function() end }", "`commutative` must be true or false"),
        ("return {\n  proto = {},\n  eval = function( end,\n}", "f.lua:3: <name> or '...' expected near 'end'"),
        ("error('broken at load')", "f.lua:1: broken at load"),
    ] {
        let s = calling("f", module);
        has(&s.err(), &["main.cf2:1:6: error: cannot load the function `f`: ", msg]);
    }
}

#[test]
fn a_module_loads_once() {
    let s = setup()
        .module(
            "n.lua",
            "local calls = 0\nreturn { proto = {}, eval = function() calls = calls + 1 return calls end }",
        )
        .file("main.cf2", "A => n()\nB => n()\nC => n()\n");
    assert_eq!(s.ok(), value("A => 1\nB => 2\nC => 3\n"));
}

#[test]
fn an_error_in_a_noeval_argument_cannot_be_caught() {
    // pcall and xpcall cannot hide an error of the evaluator raised by h:eval(): the call
    // fails with that error, as if the module had let it through.
    for catch in [
        "local ok, v = pcall(function() return args[1]:eval() end)",
        "local ok, v = pcall(args[1].eval, args[1])",
        "local ok, v = xpcall(function() return args[1]:eval() end, function(e) return 'handled' end)",
    ] {
        let module = format!(
            "return {{ proto = {{ 'ANYTYPE|UNDEF|NOEVAL', 'ANYTYPE' }}, eval = function(args)\n  {catch}\n  if ok then return v end\n  return args[2] .. ' / caught: ' .. tostring(v)\nend }}"
        );
        for (main, error) in [
            (
                "X => try(fail('out of range'), 'whatever')\n",
                "main.cf2:1:10: error: out of range",
            ),
            (
                "X => try($Nope, 'x')\n",
                "main.cf2:1:11: error: resource `Nope` is not defined",
            ),
            (
                "X => try(1 + [2], 'x')\n",
                "error: ",
            ),
        ] {
            let s = setup().module("try.lua", &module).file("main.cf2", main);
            let e = s.err();
            has(&e, &[error]);
            assert!(!e.contains("caught") && !e.contains("sandbox"), "{e}");
        }
        // Without an error, the value comes through.
        let s = setup()
            .module("try.lua", &module)
            .file("main.cf2", "X => try(1 + 1, 'x')\n");
        assert_eq!(s.ok(), value("X => 2\n"));
    }
}
