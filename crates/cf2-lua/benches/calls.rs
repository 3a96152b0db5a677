//! A call-heavy configuration: 100,000 calls of a Lua function (100 resources, each a list
//! of 1,000 calls), against the same configuration computing the values with an operator
//! and with a standard function (BENCHMARKS.md, "Custom functions"). Run with
//! `cargo bench -p cf2-lua`.
//!
//! The calls are grouped in lists because the evaluator looks for a macro of the called
//! name among all the statements of the file at every call (see BENCHMARKS.md): with
//! 100,000 top-level statements that search, not the function, dominates.

use cf2::{Compiler, MemoryHost};
use cf2_lua::LuaFunctions;
use std::time::{Duration, Instant};

const RESOURCES: usize = 100;
const PER_RESOURCE: usize = 1_000;
const CALLS: usize = RESOURCES * PER_RESOURCE;
const RUNS: usize = 5;

const ADD: &str = r#"
return {
  proto = { "NUMBER", "NUMBER" },
  eval = function(args, ctx) return args[1] + args[2] end,
}
"#;

const LABEL: &str = r#"
return {
  proto = { "TEXT", "NUMBER", "BLOCK" },
  eval = function(args, ctx)
    return cf2.block({ name = args[1] .. "-" .. args[2], port = args[3].port + args[2] })
  end,
}
"#;

fn config(expr: impl Fn(usize) -> String) -> String {
    let mut text = String::with_capacity(CALLS * 24);
    text.push_str("private Base => { port => 8000 }\n");
    for r in 0..RESOURCES {
        text.push_str(&format!("R{r} => [\n"));
        for k in 0..PER_RESOURCE {
            text.push_str(&format!("  {}\n", expr(r * PER_RESOURCE + k)));
        }
        text.push_str("]\n");
    }
    text
}

/// The best of `RUNS` compiles of `text` (parsing included: a fresh compiler each time).
fn time(functions: &std::path::Path, text: &str) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let host = MemoryHost::new().with_file("main.cf2", text.to_string());
        let compiler = Compiler::with_host(host)
            .add_functions(LuaFunctions::new(vec![functions.to_path_buf()]));
        let start = Instant::now();
        let config = compiler.compile_file("main.cf2").expect("compiles");
        let elapsed = start.elapsed();
        assert!(config
            .get(&format!("R{}.{}", RESOURCES - 1, PER_RESOURCE - 1))
            .is_some());
        best = best.min(elapsed);
    }
    best
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("calls: bench");
        return;
    }
    let dir = std::env::temp_dir().join(format!("cf2-lua-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    std::fs::write(dir.join("add.lua"), ADD).expect("module");
    std::fs::write(dir.join("label.lua"), LABEL).expect("module");
    let cases: Vec<(&str, String)> = vec![
        ("operator       {i} + 1", config(|i| format!("{i} + 1"))),
        (
            "standard fn    sum([{i}, 1])",
            config(|i| format!("sum([{i}, 1])")),
        ),
        (
            "Lua function   add({i}, 1)",
            config(|i| format!("add({i}, 1)")),
        ),
        (
            "Lua, blocks    label(web, {i}, $Base)",
            config(|i| format!("label(web, {i}, $Base)")),
        ),
    ];
    println!(
        "{CALLS} values ({RESOURCES} lists of {PER_RESOURCE}), best of {RUNS} compiles (parse + evaluate):"
    );
    let mut baseline = None;
    for (name, text) in &cases {
        let t = time(&dir, text);
        let per = t.as_secs_f64() * 1e9 / CALLS as f64;
        let extra = match baseline {
            None => {
                baseline = Some(t);
                String::new()
            }
            Some(b) => format!(
                "  (+{:.2} µs per call over the operator)",
                (t.as_secs_f64() - b.as_secs_f64()) * 1e6 / CALLS as f64
            ),
        };
        println!(
            "  {name:<40} {:>8.1} ms  {per:>6.0} ns/value{extra}",
            t.as_secs_f64() * 1e3
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
