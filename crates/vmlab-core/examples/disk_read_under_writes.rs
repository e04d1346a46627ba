//! The simulated disk's side of `scripts/probe-read-under-writes.py`: one reader of 4 KiB at
//! random offsets in the first 256 MiB, one read at a time, beside K writers each with one
//! write of W bytes in flight, sequential in its own slice of the second 256 MiB; for each
//! (W, K) the reads' mean, median and 90th percentile latency and the write rate, as JSON
//! lines. No request queue (tags are never short at these depths): the device alone, as its
//! `[[disk]]` parameters place and serve requests.
//!
//! cargo run --profile ci -p vmlab-core --example disk_read_under_writes -- \
//!     BANDWIDTH_BPS WRITE_BANDWIDTH_BPS LATENCY_NS SPINDLES CHUNK_BYTES DEVICE_BANDWIDTH_BPS [SECONDS]

use rand::Rng;
use vmlab_core::disk::{Disk, DiskParams};

const KIB: u64 = 1024;
const HALF: u64 = 256 << 20;

fn main() {
    let a: Vec<u64> = std::env::args().skip(1).map(|s| s.parse().expect("a whole number")).collect();
    if a.len() < 6 {
        eprintln!("usage: BANDWIDTH WRITE_BANDWIDTH LATENCY_NS SPINDLES CHUNK DEVICE_BANDWIDTH [SECONDS]");
        std::process::exit(2);
    }
    let p = DiskParams {
        bandwidth_bps: a[0],
        write_bandwidth_bps: a[1],
        seek_ns: 0,
        latency_ns: a[2],
        queue_depth: 32,
        spindles: a[3] as u32,
        mirrored: false,
        chunk_bytes: a[4],
        device_bandwidth_bps: a[5],
        device_write_bandwidth_bps: 0,
        write_completion_latency_ns: 0,
    };
    let secs = a.get(6).copied().unwrap_or(2);
    let levels = [(512, 0), (512, 1), (512, 2), (512, 4), (512, 8), (512, 16), (128, 4), (128, 16)];
    for (wk, k) in levels {
        level(p, secs * 1_000_000_000, wk * KIB, k);
    }
}

fn level(p: DiskParams, span: u64, wsize: u64, k: u64) {
    let mut d = Disk::new(p).expect("valid parameters");
    let mut rng = vmlab_core::prandom::stream(25, vmlab_core::prandom::Stream::Process, 0);
    // Next submission time of the reader (index 0) and each writer, and each writer's position.
    let mut next = vec![0u64; 1 + k as usize];
    let slice = HALF.checked_div(k).map_or(HALF, |s| s / wsize * wsize);
    let mut pos = vec![0u64; k as usize];
    let (mut lat, mut written) = (Vec::new(), 0u64);
    loop {
        let (i, &t) = next.iter().enumerate().min_by_key(|&(i, &t)| (t, i)).expect("actors");
        if t >= span {
            break;
        }
        if i == 0 {
            let off = rng.gen_range(0..HALF / 4096) * 4096;
            let done = d.submit(t, off, 4096, false);
            lat.push(done - t);
            next[0] = done;
        } else {
            let w = i - 1;
            let done = d.submit(t, HALF + w as u64 * slice + pos[w], wsize, true);
            pos[w] = (pos[w] + wsize) % slice;
            written += wsize;
            next[i] = done;
        }
    }
    lat.sort_unstable();
    let q = |f: f64| lat[((f * lat.len() as f64) as usize).min(lat.len() - 1)] as f64 / 1000.0;
    let mean = lat.iter().sum::<u64>() as f64 / lat.len() as f64 / 1000.0;
    println!(
        "{{\"write_kib\": {}, \"writers\": {k}, \"reads\": {}, \"read_mean_us\": {mean:.1}, \"read_p50_us\": {:.1}, \
         \"read_p90_us\": {:.1}, \"read_p99_us\": {:.1}, \"write_mb_s\": {:.1}}}",
        wsize / KIB,
        lat.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        written as f64 / (span as f64 / 1e9) / 1e6
    );
}
