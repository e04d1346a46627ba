//! The disk model's tests: the device's service times (6.x's request path in front of it is
//! tested in disk_blk_mq.rs, 2.4's request queue in ll_rw_blk/tests.rs).

use super::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const MIB: u64 = 1024 * 1024;
const SEC: u64 = 1_000_000_000;

fn stream(disk: &mut Disk, req: u64, total: u64, write: bool) -> u64 {
    let mut now = 0;
    let mut off = 0;
    while off < total {
        now = disk.submit(now, off, req, write);
        off += req;
    }
    now
}

fn mbps(bytes: u64, ns: u64) -> f64 {
    bytes as f64 / (ns as f64 / SEC as f64) / 1e6
}

#[test]
fn presets_valid() {
    for m in DiskParams::PRESETS {
        DiskParams::preset(m).unwrap().validate().unwrap();
    }
    assert!(DiskParams::preset("floppy").is_none());
    let mut p = DiskParams::preset("raid10").unwrap();
    p.spindles = 5;
    assert!(Disk::new(p).is_err());
}

#[test]
fn hdd_sequential_reaches_bandwidth() {
    let mut d = Disk::preset("hdd").unwrap();
    let end = stream(&mut d, MIB, 256 * MIB, false);
    let bw = mbps(256 * MIB, end);
    // 1 MiB per 50 µs of command overhead: ~0.5 % below the media rate.
    assert!((98.0..=100.0).contains(&bw), "{bw} MB/s");
    assert_eq!(d.bytes_read(), 256 * MIB);
    assert_eq!(d.requests(), 256);
    assert_eq!(d.busy_ns(end), end);
    assert!((d.util_percent(end) - 100.0).abs() < 1e-9);
}

#[test]
fn striped_sequential_reaches_stripes_times_bandwidth() {
    for (model, write) in [("raid10", false), ("raid10", true), ("nvme", false), ("san", false)] {
        let mut d = Disk::preset(model).unwrap();
        let p = *d.params();
        let req = 16 * MIB;
        let end = stream(&mut d, req, 32 * req, write);
        let bw = mbps(32 * req, end);
        let want = (p.bandwidth_bps * p.stripes() as u64) as f64 / 1e6;
        assert!(bw > 0.9 * want && bw <= want, "{model} write={write}: {bw} of {want} MB/s");
    }
}

#[test]
fn random_single_request_is_seek_bound() {
    let mut d = Disk::preset("hdd").unwrap();
    let t = d.submit(0, 10 * MIB, 4096, false);
    assert_eq!(t, 50_000 + 8_000_000 + 40_960);
    // Continuing where the head stopped costs no seek.
    let t2 = d.submit(t, 10 * MIB + 4096, 4096, false);
    assert_eq!(t2 - t, 50_000 + 40_960);
}

#[test]
fn chunk_split_covers_every_byte_once() {
    let mut d = Disk::preset("raid10").unwrap();
    let p = *d.params();
    // Unaligned request spanning 7 chunks over 3 stripes, written so both mirrors see it.
    let off = 5 * p.chunk_bytes + 1000;
    let len = 6 * p.chunk_bytes + 500;
    let done = d.submit(0, off, len, true);
    let mut bytes = 0;
    for (i, s) in d.spindles.iter().enumerate() {
        if s.ops > 0 {
            let xfer = (s.busy_ns - p.latency_ns - p.seek_ns) as u128;
            let b = xfer * p.bandwidth_bps as u128 / NS_PER_SEC;
            if i % 2 == 0 {
                bytes += b as u64;
            }
        }
    }
    // Rounding up each piece to whole ns may lose < 1 byte per piece.
    assert!(len - bytes <= 3, "{bytes} of {len}");
    assert!(d.spindles.iter().all(|s| s.ops == 1));
    assert_eq!(d.queued_until(), done);
}

#[test]
fn mirrored_write_hits_both_read_one() {
    let mut d = Disk::preset("raid10").unwrap();
    d.submit(0, 0, 4096, true);
    assert_eq!((d.spindle_ops(0), d.spindle_ops(1)), (1, 1));
    d.submit(SEC, 8192, 4096, false);
    assert_eq!(d.spindle_ops(0) + d.spindle_ops(1), 3);
}

#[test]
fn accounting_in_flight_and_busy() {
    let mut d = Disk::preset("hdd").unwrap();
    let a = d.submit(0, 0, 4096, false);
    let b = d.submit(0, 100 * MIB, 4096, true);
    assert!(b > a);
    assert_eq!(d.in_flight(0), 2);
    assert_eq!(d.in_flight(a), 1);
    assert_eq!(d.in_flight(b), 0);
    assert_eq!(d.queued_until(), b);
    assert_eq!(d.busy_ns(a), a);
    assert_eq!(d.spindle_busy_ns(0, a), a);
    // Idle gap, then one more request: busy time excludes the gap.
    let c = d.submit(b + SEC, 0, 4096, false);
    assert_eq!(d.busy_ns(c), b + (c - b - SEC));
    assert_eq!(d.spindle_busy_ns(0, c + SEC), d.busy_ns(c + SEC));
    assert_eq!((d.reads(), d.writes(), d.bytes_written()), (2, 1, 4096));
}

#[test]
fn queueing_shrinks_seek() {
    let mut d = Disk::preset("hdd").unwrap();
    let mut t = 0;
    for i in 0..4u64 {
        t = d.submit(0, i * 100 * MIB + 7, 4096, false);
    }
    // Seeks at k = 1, 2, 3, 4 outstanding.
    let s = 8_000_000f64;
    let want = 4.0 * (50_000.0 + 40_960.0) + s * (1.0 + 1.0 / 2f64.sqrt() + 1.0 / 3f64.sqrt() + 0.5);
    assert!((t as f64 - want).abs() < 4.0, "{t} vs {want}");
}

/// `readers` closed-loop threads each reading random 160 KiB blocks, next request at the
/// completion of the previous one. Returns bytes per second.
fn random_readers(model: &str, readers: usize, seed: u64) -> (f64, Vec<u64>) {
    let mut d = Disk::preset(model).unwrap();
    let mut rng = Pcg64::seed_from_u64(seed);
    let size = 160 * 1024;
    let span = 100 * 1024 * MIB;
    let mut next = vec![0u64; readers];
    let mut completions = Vec::new();
    let total_reqs = 4000;
    for _ in 0..total_reqs {
        // Serve the reader whose previous read finished first (ties: lowest index).
        let (r, &now) = next.iter().enumerate().min_by_key(|&(i, &t)| (t, i)).unwrap();
        let off = rng.gen_range(0..span / 4096) * 4096;
        let done = d.submit(now, off, size, false);
        completions.push(done);
        next[r] = done;
    }
    let end = *next.iter().max().unwrap();
    ((total_reqs * size) as f64 / (end as f64 / SEC as f64), completions)
}

#[test]
fn raid10_concurrent_random_readers_scale() {
    let (one, _) = random_readers("raid10", 1, 4);
    let (many, _) = random_readers("raid10", 16, 4);
    eprintln!("raid10 random 160K: 1 reader {:.1} MB/s, 16 readers {:.1} MB/s", one / 1e6, many / 1e6);
    assert!(many >= 3.0 * one, "1 reader {:.1} MB/s, 16 readers {:.1} MB/s", one / 1e6, many / 1e6);
}

#[test]
fn deterministic() {
    let (a, ca) = random_readers("raid10", 16, 7);
    let (b, cb) = random_readers("raid10", 16, 7);
    assert_eq!(ca, cb);
    assert_eq!(a.to_bits(), b.to_bits());
}

/// `streams` closed-loop readers, each reading its own region sequentially in `req`-byte
/// requests (the next at the previous one's completion), round-robin over the spindles by
/// offset; returns every completion with its bytes.
fn parallel_streams(d: &mut Disk, streams: u64, req: u64, per_stream: u64) -> Vec<(u64, u64)> {
    mixed_streams(d, streams, 0, req, per_stream).into_iter().map(|(c, b, _)| (c, b)).collect()
}

/// [`parallel_streams`] with the first `writers` of the streams writing: every completion
/// with its bytes and direction.
fn mixed_streams(d: &mut Disk, streams: u64, writers: u64, req: u64, per_stream: u64) -> Vec<(u64, u64, bool)> {
    let mut next = vec![0u64; streams as usize];
    let mut off: Vec<u64> = (0..streams).map(|s| s * (1 << 40) + s * d.params().chunk_bytes).collect();
    let mut done = Vec::new();
    for _ in 0..streams * per_stream {
        let (s, &now) = next.iter().enumerate().min_by_key(|&(i, &t)| (t, i)).unwrap();
        let write = (s as u64) < writers;
        let c = d.submit(now, off[s], req, write);
        done.push((c, req, write));
        off[s] += req;
        next[s] = c;
    }
    done
}

fn virtual_disk(device_bandwidth_bps: u64) -> DiskParams {
    DiskParams {
        bandwidth_bps: 1_000_000_000,
        seek_ns: 0,
        latency_ns: 40_000,
        queue_depth: 32,
        spindles: 3,
        mirrored: false,
        chunk_bytes: 4 * MIB,
        device_bandwidth_bps,
        write_bandwidth_bps: 0,
        device_write_bandwidth_bps: 0,
        write_completion_latency_ns: 0,
    }
}

#[test]
fn a_write_moves_at_the_write_bandwidth_and_a_read_at_the_read_one() {
    let mut p = virtual_disk(0);
    p.write_bandwidth_bps = 250_000_000;
    let bytes = MIB;
    // One spindle alone, no link: latency + bytes at the direction's rate.
    let mut d = Disk::new(p).unwrap();
    let w = d.submit(0, 0, bytes, true);
    assert_eq!(w, p.latency_ns + transfer_ns(bytes, 250_000_000));
    let t0 = SEC;
    let r = d.submit(t0, 8 * MIB, bytes, false) - t0;
    assert_eq!(r, p.latency_ns + transfer_ns(bytes, 1_000_000_000));
    assert!(w > 3 * r, "write {w} ns, read {r} ns");
    // Unset, a write costs what a read does (every preset).
    let mut same = Disk::new(virtual_disk(0)).unwrap();
    assert_eq!(same.submit(0, 0, bytes, true), r);
    assert_eq!(d.write_bandwidth_bps(), 3 * 250_000_000);
    assert_eq!(same.write_bandwidth_bps(), same.bandwidth_bps());
}

#[test]
fn streams_together_never_exceed_the_device_bandwidth() {
    for (streams, req, limit) in [(3, 4 * MIB, 1_200_000_000), (8, 160 * 1024, 1_500_000_000), (16, 4096, 50_000_000)] {
        let mut d = Disk::new(virtual_disk(limit)).unwrap();
        let mut done = parallel_streams(&mut d, streams, req, 40);
        done.sort();
        // By any completion time t, the link has moved at most limit × t (it starts idle at 0).
        let mut moved = 0u128;
        for &(t, b) in &done {
            moved += b as u128;
            assert!(moved * NS_PER_SEC <= limit as u128 * t as u128, "{streams}×{req}: {moved} B by {t} ns");
        }
        // ...and the limit binds: without it the same streams move more than it allows.
        let end = done.last().unwrap().0;
        let mut free = Disk::new(virtual_disk(0)).unwrap();
        let free_end = parallel_streams(&mut free, streams, req, 40).iter().map(|c| c.0).max().unwrap();
        let rate = |ns: u64| moved as f64 / (ns as f64 / SEC as f64);
        assert!(rate(free_end) > limit as f64, "{streams}×{req}: unlimited only {:.0} B/s", rate(free_end));
        assert!(rate(end) > 0.9 * limit as f64, "{streams}×{req}: the link idles: {:.0} B/s", rate(end));
    }
}

#[test]
fn writes_at_depth_cross_the_link_at_the_write_ceiling() {
    // 16 streams of 1280 KiB, as the host's flusher put on the loop device: the spindles
    // alone would move 3 GB/s, the link reads at 1 GB/s.
    let req = 1280 * 1024;
    let rate = |w: u64| {
        let mut d = Disk::new(DiskParams { device_write_bandwidth_bps: w, ..virtual_disk(1_000_000_000) }).unwrap();
        let done = mixed_streams(&mut d, 16, 16, req, 20);
        let end = done.iter().map(|c| c.0).max().unwrap();
        (done.len() as u64 * req) as f64 / (end as f64 / SEC as f64)
    };
    // Without a write ceiling the writes share the read one; with one they move at it.
    let (shared, own) = (rate(0), rate(2_000_000_000));
    assert!((0.9e9..=1.0e9).contains(&shared), "{shared:.0} B/s");
    assert!((1.8e9..=2.0e9).contains(&own), "{own:.0} B/s");
    // A ceiling equal to the read one is no ceiling: the same completions to the nanosecond.
    let mut a = Disk::new(virtual_disk(1_000_000_000)).unwrap();
    let mut b =
        Disk::new(DiskParams { device_write_bandwidth_bps: 1_000_000_000, ..virtual_disk(1_000_000_000) }).unwrap();
    assert_eq!(mixed_streams(&mut a, 8, 4, req, 20), mixed_streams(&mut b, 8, 4, req, 20));
    // Reads do not move faster for it.
    let mut r =
        Disk::new(DiskParams { device_write_bandwidth_bps: 2_000_000_000, ..virtual_disk(1_000_000_000) }).unwrap();
    let mut plain = Disk::new(virtual_disk(1_000_000_000)).unwrap();
    assert_eq!(parallel_streams(&mut r, 8, req, 20), parallel_streams(&mut plain, 8, req, 20));
    // The device's write rate (what the dirty throttle scales by) is the ceiling's.
    assert_eq!(r.write_bandwidth_bps(), 2_000_000_000);
    assert_eq!(plain.write_bandwidth_bps(), 3_000_000_000);
}

#[test]
fn reads_and_writes_share_the_links_time() {
    // 8 readers beside 8 writers, on a link that reads at 1 GB/s and writes at 2 GB/s: each
    // byte read takes 1 ns of the link and each byte written 0.5 ns, so by any moment the
    // two together have used no more of the link's time than has passed, and nearly all of it.
    let req = 1280 * 1024;
    let p = DiskParams { device_write_bandwidth_bps: 2_000_000_000, ..virtual_disk(1_000_000_000) };
    let mut d = Disk::new(p).unwrap();
    let mut done = mixed_streams(&mut d, 16, 8, req, 20);
    done.sort();
    let mut used = 0u128;
    for &(t, b, w) in &done {
        used += transfer_ns(b, if w { 2_000_000_000 } else { 1_000_000_000 }) as u128;
        assert!(used <= t as u128, "{used} ns of link by {t}");
    }
    let end = done.last().unwrap().0 as f64;
    assert!(used as f64 > 0.9 * end, "the link idles: {used} ns of {end}");
    // Both directions move: the writers do not starve the readers.
    let read = done.iter().filter(|c| !c.2).count();
    assert!(read >= 8 * 20 / 2, "{read} reads");
}

#[test]
fn one_stream_under_the_device_bandwidth_is_unchanged() {
    // Requests that divide the chunk: one that straddles two stripes moves its two pieces at
    // once, two streams for a moment, and may then wait for the link.
    for req in [4096, 128 * 1024, 4 * MIB] {
        let mut with = Disk::new(virtual_disk(1_100_000_000)).unwrap();
        let mut without = Disk::new(virtual_disk(0)).unwrap();
        assert_eq!(parallel_streams(&mut with, 1, req, 50), parallel_streams(&mut without, 1, req, 50), "{req}");
        assert_eq!(with.busy_ns(u64::MAX), without.busy_ns(u64::MAX));
    }
}

#[test]
fn an_idle_spindle_is_not_held_behind_another_ones_queue() {
    let mut d = Disk::new(virtual_disk(1_000_000_000)).unwrap();
    // Spindle 0 gets a long queue; a request for spindle 1 at the same moment fits in the
    // link before spindle 0's later transfers are ready.
    for i in 0..8 {
        d.submit(0, 3 * i * 4 * MIB, 4 * MIB, false);
    }
    let t = d.submit(0, 4 * MIB, 4096, false);
    assert!(t < 5_000_000, "a 4 KiB read on an idle spindle took {t} ns");
}

/// Sixteen 1 MiB writes at once on the virtual disk (link 1 GB/s, 3 spindles), then a read
/// beside them: each one's completion.
fn sixteen_writes_and_a_read(latency_ns: u64) -> (Vec<u64>, u64) {
    let p = DiskParams { write_completion_latency_ns: latency_ns, ..virtual_disk(1_000_000_000) };
    let mut d = Disk::new(p).unwrap();
    let writes: Vec<u64> = (0..16).map(|i| d.submit(0, i * MIB, MIB, true)).collect();
    let read = d.submit(0, 512 * MIB, MIB, false);
    (writes, read)
}

#[test]
fn a_writes_completion_latency_is_taken_by_every_write_in_flight_at_once() {
    let (plain, read) = sixteen_writes_and_a_read(0);
    let lat = 2_500_000;
    let (slow, read_beside) = sixteen_writes_and_a_read(lat);
    // Each write completes the latency after its data has drained, wherever it queued: the
    // 16th at 16 MiB / 1 GB/s + 2.5 ms, not 16 × 2.5 ms later (issue 17's loop image: 2.2–2.8 ms
    // plus the drain of what is ahead, at 0–48 requests in flight).
    for (a, b) in plain.iter().zip(&slow) {
        assert_eq!(*b, a + lat);
    }
    let last = *slow.iter().max().unwrap();
    assert!(last < transfer_ns(16 * MIB, 1_000_000_000) + 2 * lat + 2_000_000, "last write done at {last} ns");
    // The latency holds neither the spindles nor the link: a read beside them is served as before.
    assert_eq!(read_beside, read);
    // A write alone: its drain, then the latency.
    let mut alone = Disk::new(DiskParams { write_completion_latency_ns: lat, ..virtual_disk(1_000_000_000) }).unwrap();
    let mut bare = Disk::new(virtual_disk(1_000_000_000)).unwrap();
    assert_eq!(alone.submit(0, 0, MIB, true), bare.submit(0, 0, MIB, true) + lat);
}

#[test]
fn a_write_in_its_completion_latency_is_in_flight() {
    // The stat file's in-flight count and the throttle see a write until it completes.
    let (plain, _) = sixteen_writes_and_a_read(0);
    let last = *plain.iter().max().unwrap();
    let p = DiskParams { write_completion_latency_ns: 2_500_000, ..virtual_disk(1_000_000_000) };
    let mut d = Disk::new(p).unwrap();
    for i in 0..16 {
        d.submit(0, i * MIB, MIB, true);
    }
    assert_eq!(d.in_flight(last), 16 - plain.iter().filter(|&&c| c + 2_500_000 <= last).count());
    assert!(d.in_flight(last) > 0);
    assert_eq!(d.in_flight(last + 2_500_000), 0);
    assert!(d.busy_ns(u64::MAX) >= last + 2_500_000);
}

#[test]
fn zero_byte_request_costs_latency() {
    let mut d = Disk::preset("raid10").unwrap();
    let t = d.submit(0, 0, 0, true);
    assert_eq!(t, d.params().latency_ns);
}
