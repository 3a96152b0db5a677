//! Micro-benchmarks (criterion): `cargo bench -p cf2-bench`.
//!
//! - `parse/big`: parse throughput over a ~4 MB text with the synthetic site's token mix
//!   (reported in MB/s, decimal);
//! - `parse/aspect`: one aspect file (~1 KB), the typical file size of the site;
//! - `host/cold`: compiling one synthetic host (base + 4 aspects) with a fresh loader, so
//!   every file is read from memory, parsed, checked and evaluated — the library's share
//!   of one `cf2 compile` process;
//! - `host/warm`: the same host with a loader that has parsed its files already — the
//!   per-host cost of batch mode, where every shared file is parsed once;
//! - `host/json`: rendering the compiled host as JSON.
//!
//! `bench/run.sh` runs these with a short measurement time and reads the throughput.

use cf2_bench::{big_source, compile_host, site_host, ASPECTS};
use cf2_eval::Loader;
use cf2_syntax::FileId;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

/// Size of the text for `parse/big`.
const BIG: usize = 4_000_000;

fn parse(c: &mut Criterion) {
    let big = big_source(BIG);
    let aspect = ASPECTS[0].1;
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::BytesDecimal(big.len() as u64));
    g.sample_size(20);
    g.bench_function("big", |b| {
        b.iter(|| cf2_syntax::parse(FileId(0), black_box(&big)))
    });
    g.throughput(Throughput::BytesDecimal(aspect.len() as u64));
    g.sample_size(100);
    g.bench_function("aspect", |b| {
        b.iter(|| cf2_syntax::parse(FileId(0), black_box(aspect)))
    });
    g.finish();
}

fn host(c: &mut Criterion) {
    let host = site_host();
    let mut g = c.benchmark_group("host");
    g.bench_function("cold", |b| {
        b.iter_batched(
            Loader::new,
            |loader| compile_host(&host, &loader),
            BatchSize::SmallInput,
        )
    });
    let loader = Loader::new();
    compile_host(&host, &loader);
    g.bench_function("warm", |b| {
        b.iter(|| compile_host(&host, black_box(&loader)))
    });
    let value = compile_host(&host, &loader);
    g.bench_function("json", |b| b.iter(|| cf2_output_json(black_box(&value))));
    g.finish();
}

/// The JSON text of a value, as `cf2 compile -o -.json` writes it.
fn cf2_output_json(v: &cf2_value::Value) -> String {
    cf2_output::render(v, cf2_output::Format::Json).expect("a compiled value renders as JSON")
}

criterion_group!(benches, parse, host);
criterion_main!(benches);
