//! Custom mutation functions (reference §4.3, §6.2): what `mutate` receives, commutative
//! and not, with unordered imports, and with `final`, `default` and undefined values.

mod common;
use common::{has, setup, value};

/// Records what it is given: `{ top = [...], lower = ..., file, line, resource }`.
const SHOW: &str = r#"
return {
  commutative = true,
  mutate = function(top, lower, ctx)
    return { top = top, lower = lower, file = ctx.file, line = ctx.line,
             resource = ctx.resource, name = ctx.name }
  end,
}
"#;

const CONCAT: &str = r#"
return {
  mutate = function(top, lower)
    return (lower or "") .. top[1]
  end,
}
"#;

#[test]
fn mutate_gets_the_top_values_and_the_value_below() {
    let s = setup()
        .module("show.lua", SHOW)
        .file("main.cf2", "import(low)\nX ~(SHOW)> [1, { a => 2 }]\n")
        .file("low.cf2", "X => base\n");
    assert_eq!(
        s.ok(),
        value("X => { file => 'main.cf2', line => 2, lower => base, name => SHOW, resource => X, top => [[1, { a => 2 }]] }\n")
    );
    // Nothing below: lower is nil.
    let s = setup()
        .module("show.lua", SHOW)
        .file("main.cf2", "X ~(show)> 1\n");
    assert_eq!(
        s.ok(),
        value("X => { file => 'main.cf2', line => 1, name => show, resource => X, top => [1] }\n")
    );
}

#[test]
fn commutative_unordered_tops_come_together_in_reading_order() {
    let s = setup()
        .module("show.lua", SHOW)
        .file("main.cf2", "import(a)\nimport(b)\nimport(low)\n")
        .file("a.cf2", "import(low)\nX ~(show)> 1\n")
        .file("b.cf2", "import(low)\nX ~(show)> 2\n")
        .file("low.cf2", "X => 0\n");
    assert_eq!(
        s.ok(),
        value("X => { file => 'a.cf2', line => 2, lower => 0, name => show, resource => X, top => [1, 2] }\n")
    );
}

#[test]
fn ordered_mutations_fold_from_the_bottom() {
    let s = setup()
        .module("concat.lua", CONCAT)
        .file("main.cf2", "import(mid)\nX ~(concat)> c\n")
        .file("mid.cf2", "import(low)\nX ~(concat)> b\n")
        .file("low.cf2", "X => a\n");
    assert_eq!(s.ok(), value("X => abc\n"));
    // In one statement.
    let s = setup()
        .module("concat.lua", CONCAT)
        .file("main.cf2", "X => a ~(concat)> b ~(concat)> c\n");
    assert_eq!(s.ok(), value("X => abc\n"));
}

#[test]
fn a_non_commutative_function_cannot_combine_unordered_definitions() {
    let s = setup()
        .module("concat.lua", CONCAT)
        .file("main.cf2", "import(a)\nimport(b)\n")
        .file("a.cf2", "X ~(concat)> a\n")
        .file("b.cf2", "X ~(concat)> b\n");
    has(
        &s.err(),
        &[
            "cannot determine mutation order for `X`",
            "`concat` (",
            "concat.lua) is not commutative",
        ],
    );
    // Nor two in one file.
    let s = setup()
        .module("concat.lua", CONCAT)
        .file("main.cf2", "X ~(concat)> a\nX ~(concat)> b\n");
    has(&s.err(), &["`X` is defined more than once in main.cf2"]);
}

#[test]
fn undefined_tops_are_dropped_before_the_call() {
    let s = setup()
        .module("show.lua", SHOW)
        .file("main.cf2", "import(low)\nX ~(show)> if (false) then 1\n")
        .file("low.cf2", "X => 5\n");
    assert_eq!(s.ok(), value("X => 5\n"));
}

#[test]
fn final_and_default_take_part_as_usual() {
    let s = setup()
        .module("concat.lua", CONCAT)
        .file("main.cf2", "import(low)\nX ~(concat)> b\nY ~(concat)> b\n")
        .file("low.cf2", "X ~(final)> fixed\nY ~(default)> a\n");
    assert_eq!(s.ok(), value("X => fixed\nY => b\n"));
}

#[test]
fn a_nil_result_is_undefined() {
    let s = setup()
        .module("drop.lua", "return { mutate = function() return nil end }")
        .file("main.cf2", "import(low)\nX ~(drop)> 1\n")
        .file("low.cf2", "X => 5\n");
    has(&s.err(), &["`X` is undefined"]);
}

#[test]
fn errors_name_the_resource_and_definition() {
    let s = setup()
        .module(
            "strict.lua",
            "return { mutate = function(top, lower)\n  if lower == nil then error('nothing to add to') end\n  return lower + top[1]\nend }",
        )
        .file("main.cf2", "Port ~(strict)> 1\n");
    has(
        &s.err(),
        &[
            "main.cf2:1:1: error: `~(strict)>` failed: ",
            "strict.lua:2: nothing to add to",
            "in this mutation",
        ],
    );
}

#[test]
fn lookups_in_a_mutation_resolve_in_the_definitions_file() {
    let s = setup()
        .module(
            "plus.lua",
            "return { mutate = function(top, lower, ctx) return (lower or 0) + top[1] + ctx:lookup('Step') end }",
        )
        .file("main.cf2", "Step => 100\nV => import(sub)\n")
        .file("sub.cf2", "Step => 10\nX => 1 ~(plus)> 2\n");
    assert_eq!(s.ok(), value("Step => 100\nV => { Step => 10, X => 13 }\n"));
}

#[test]
fn merged_blocks_carry_custom_mutations_to_their_members() {
    let s = setup()
        .module("concat.lua", CONCAT)
        .file(
            "main.cf2",
            "import(low)\nWeb ~> { Name ~(concat)> '-prod' }\n",
        )
        .file("low.cf2", "Web => { Name => www, Port => 80 }\n");
    assert_eq!(s.ok(), value("Web => { Name => 'www-prod', Port => 80 }\n"));
}
