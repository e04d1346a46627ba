//! What 2.4's request queues do to their submitters, per disk and sample interval: tasks that
//! found no request and slept in `__get_request_wait` (reads and writes: how many, seconds
//! asleep), and the plug (`generic_plug_device`): plugs, buffers merged only because the queue
//! was plugged or into a held request, seconds plugged, and over the run so far the longest
//! plug (ms) and the most one plug held (KiB) — a write made on a plugged queue waits there
//! until `tq_disk` runs (ll_rw_blk/plug.rs); under 2.4's elevator, the reads it put in a
//! plugged queue (with a `driver_depth`, in the queue's list, plugged or not), those it put
//! ahead of a held or listed request, and the requests passed (ll_rw_blk/elevator.rs). Then the device's reads and writes (MiB) and its requests. An observer: the run is the same as without it.
//!
//! cargo run --release -p vmlab-core --example queue24 -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]

mod common;

use vmlab_core::sim::Sim;

/// A disk's counters at one sample: read waits, read wait ns, write waits, write wait ns, plugs,
/// plug merges, plugged ns, read bytes, written bytes, requests, reads held, reads put ahead,
/// requests passed.
type Row = [u64; 13];

fn row(sim: &Sim, d: usize) -> Row {
    let disk = &sim.k.disks[d];
    let w = disk.request_waits();
    let p = disk.plug_stats().unwrap_or_default();
    [
        w.waits[0],
        w.wait_ns[0],
        w.waits[1],
        w.wait_ns[1],
        p.plugs,
        p.merges,
        p.plugged_ns,
        disk.bytes_read(),
        disk.bytes_written(),
        disk.stat().read_ios + disk.stat().write_ios,
        p.reads_held,
        p.reads_ahead,
        p.passed,
    ]
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("queue24");
    println!(
        "t disk | read_waits read_wait_s write_waits write_wait_s | plugs plug_merges plugged_s longest_plug_ms \
         most_held_KiB | elv_reads elv_reads_ahead elv_passed | \
         read_MiB written_MiB requests"
    );
    let mut prev: Vec<Row> = Vec::new();
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return;
        }
        prev.resize(sim.k.disks.len(), [0; 13]);
        for (d, was) in prev.iter_mut().enumerate() {
            let now = row(sim, d);
            let x: Vec<u64> = now.iter().zip(was.iter()).map(|(a, b)| a - b).collect();
            let (longest, most) = sim.k.disks[d].plug_stats().map_or((0, 0), |p| (p.longest_ns, p.most_held_bytes));
            println!(
                "{} {d} | {} {:.2} {} {:.2} | {} {} {:.3} {:.2} {} | {} {} {} | {:.1} {:.1} {}",
                sim.s.now / 1_000_000_000,
                x[0],
                x[1] as f64 / 1e9,
                x[2],
                x[3] as f64 / 1e9,
                x[4],
                x[5],
                x[6] as f64 / 1e9,
                longest as f64 / 1e6,
                most >> 10,
                x[10],
                x[11],
                x[12],
                x[7] as f64 / (1 << 20) as f64,
                x[8] as f64 / (1 << 20) as f64,
                x[9],
            );
            *was = now;
        }
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
