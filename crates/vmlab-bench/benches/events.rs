//! Simulated page events per wall second (criterion). `cargo bench -p vmlab-bench` reports the
//! throughput as elements/s: sequential anonymous faults, then examples (a) and (b).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use vmlab_core::api::{self, RunOpts};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn events(c: &mut Criterion) {
    let cases = [
        ("seq-anon", "scenarios/bench/seq-anon.toml", vec![]),
        ("anon-overcommit", "scenarios/examples/anon-overcommit.toml", vec![]),
        ("zipf-file", "scenarios/examples/zipf-file.toml", vec!["machine.memory=512MiB".to_string()]),
    ];
    let mut g = c.benchmark_group("page_events");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    for (name, path, sets) in cases {
        let sc = vmlab_core::workload::load_scenario(&root().join(path), &sets).expect("scenario");
        let (r, _) = api::run(&sc, RunOpts::default()).expect("run");
        g.throughput(Throughput::Elements(r.events));
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    let _ = api::run(&sc, RunOpts::default()).expect("run");
                }
                t.elapsed()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, events);
criterion_main!(benches);
