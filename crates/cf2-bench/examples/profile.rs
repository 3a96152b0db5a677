//! A loop to profile under `perf` or `valgrind --tool=callgrind` (instruction counts do not
//! suffer from a busy machine the way timings do):
//!
//! ```text
//! cargo build --release -p cf2-bench --example profile
//! valgrind --tool=callgrind target/release/examples/profile warm 200
//! ```
//!
//! Modes: `warm N` evaluates the synthetic host N times with a loader that has parsed its
//! files already (batch mode's per-host cost); `cold N` uses a fresh loader each time
//! (parse + check + evaluate); `parse N` parses a 1 MB text N times; `parse-host FILE N`
//! reads FILE (a host's own small file, say) and parses it N times, building its
//! `SourceFile` (line starts) each time as the loader does, to see per-file fixed costs.

use cf2_bench::{big_source, compile_host, site_host};
use cf2_eval::Loader;
use cf2_syntax::{FileId, SourceFile};
use std::hint::black_box;
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("warm");
    if mode == "parse-host" {
        let path = args.get(2).map(String::as_str).unwrap_or("");
        let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let text: Arc<str> = match std::fs::read_to_string(path) {
            Ok(t) => t.into(),
            Err(e) => {
                eprintln!("profile parse-host: cannot read `{path}`: {e}");
                std::process::exit(2);
            }
        };
        for _ in 0..n {
            black_box(SourceFile::new(path, Arc::clone(&text)));
            black_box(cf2_syntax::parse(FileId(0), black_box(&text)));
        }
        return;
    }
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let host = site_host();
    match mode {
        "warm" => {
            let loader = Loader::new();
            compile_host(&host, &loader);
            for _ in 0..n {
                black_box(compile_host(&host, &loader));
            }
        }
        "cold" => {
            for _ in 0..n {
                black_box(compile_host(&host, &Loader::new()));
            }
        }
        "parse" => {
            let text = big_source(1_000_000);
            for _ in 0..n {
                black_box(cf2_syntax::parse(FileId(0), &text));
            }
        }
        other => {
            eprintln!(
                "usage: profile warm|cold|parse N, or profile parse-host FILE N (not `{other}`)"
            );
            std::process::exit(2);
        }
    }
}
