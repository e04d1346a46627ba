//! 2.4's request-queue bounds (ll_rw_blk.rs) reach the disks through the profile: 2.4.22's
//! `max_queue_sectors_kb` in the 2.4.23aa rows, with `blk_init_free_list`'s halving on a box
//! of under 30 MiB; the older request count `max_queue_requests` (128 in 2.4.9, off in its rows
//! until seed 000's dd is understood under it), with `blk_dev_init`'s halving on a box of 32 MB
//! or less; and 2.4's plug on an empty queue (`plug_empty_queue`, on in the aa rows).

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

const BOX: &str = r#"name = "queue24"
seed = 1
[machine]
memory = "256MiB"
cpus = 1
arch = "i386"
[[disk]]
name = "hda"
model = "hdd"
[[process]]
name = "idle"
program = '''
compute 1ms
'''
"#;

fn sim(profile: &str, sets: &[&str]) -> Sim {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("queue24.toml", BOX, &sets).expect("loads");
    Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds")
}

/// Scattered 64-KiB writes at time 0 until `bytes` are in flight; then whether a new write
/// request would wait.
fn waits_after(s: &mut Sim, bytes: u64) -> Option<u64> {
    let d = &mut s.k.disks[0];
    for i in 0..bytes / (64 << 10) {
        d.submit(0, i * (16 << 20), 64 << 10, true);
    }
    d.request_wait(0, true)
}

#[test]
fn the_aa_rows_throttle_on_sectors() {
    for p in ["linux-2.4.23aa1", "linux-2.4.23aa2"] {
        let mut s = sim(p, &[]);
        assert_eq!(waits_after(&mut s, 4 << 20), Some(0), "{p}: 4 MiB in flight is not over");
        assert!(waits_after(&mut s, 64 << 10).is_some_and(|w| w > 0), "{p}: 4 MiB + 64 KiB is");
        let mut off = sim(p, &["reclaim.max_queue_sectors_kb=0"]);
        assert_eq!(waits_after(&mut off, 8 << 20), None, "{p} with the field 0");
    }
    for p in ["linux-2.4.9", "linux-2.6.26", "linux-6.8"] {
        assert_eq!(waits_after(&mut sim(p, &[]), 8 << 20), None, "{p}");
    }
}

#[test]
fn the_2_4_9_rows_throttle_on_64_write_requests() {
    const ON: &str = "reclaim.max_queue_requests=128";
    for p in ["linux-2.4.9", "linux-2.4.9-phillips"] {
        // 63 scattered 64-KiB writes are 63 requests: the 64th is free …
        let mut s = sim(p, &[ON]);
        assert_eq!(waits_after(&mut s, 63 << 16), Some(0), "{p}: 63 requests");
        // … and the 65th is not, though 4 MiB is far under any time backlog of this disk.
        assert!(waits_after(&mut s, 1 << 16).is_some_and(|w| w > 0), "{p}: 64 requests");
        let mut off = sim(p, &["reclaim.max_queue_requests=0"]);
        assert_eq!(waits_after(&mut off, 8 << 20), None, "{p} with the field 0");
    }
    // The 2.4.23aa rows bound sectors, not requests: 64 requests of 64 KiB (4 MiB) pass.
    assert_eq!(waits_after(&mut sim("linux-2.4.23aa1", &[]), 64 << 16), Some(0));
}

#[test]
fn a_box_of_32_mb_or_less_gets_half_the_requests() {
    let on = "reclaim.max_queue_requests=128";
    let mut small = sim("linux-2.4.9", &["machine.memory=32MiB", on]);
    assert!(waits_after(&mut small, 32 << 16).is_some_and(|w| w > 0), "32 write requests of 64");
    let mut big = sim("linux-2.4.9", &[on]);
    assert_eq!(waits_after(&mut big, 32 << 16), Some(0));
}

#[test]
fn a_box_under_30_mib_gets_half_the_queue() {
    let mut small = sim("linux-2.4.23aa1", &["machine.memory=24MiB"]);
    assert!(waits_after(&mut small, (2 << 20) + (64 << 10)).is_some_and(|w| w > 0));
    let mut big = sim("linux-2.4.23aa1", &[]);
    assert_eq!(waits_after(&mut big, (2 << 20) + (64 << 10)), Some(0));
}

/// Two contiguous 4-KiB writes 1 ms apart on an idle disk: whether the second joined the
/// first, which the drive is already moving.
fn second_joins_first(s: &mut Sim) -> bool {
    let d = &mut s.k.disks[0];
    d.submit(0, 0, 4096, true);
    d.submit(1_000_000, 4096, 4096, true);
    d.last_merged()
}

#[test]
fn the_aa_rows_plug_an_empty_queue() {
    for p in ["linux-2.4.23aa1", "linux-2.4.23aa2"] {
        let mut s = sim(p, &[]);
        assert!(second_joins_first(&mut s), "{p}");
        assert_eq!(s.k.disks[0].plug_stats().map(|p| (p.plugs, p.merges)), Some((1, 1)), "{p}");
        let mut off = sim(p, &["reclaim.plug_empty_queue=false"]);
        assert!(!second_joins_first(&mut off), "{p} with the field off");
        assert!(off.k.disks[0].plug_stats().is_none());
    }
    for p in ["linux-2.4.9", "linux-2.6.26", "linux-6.8"] {
        let mut s = sim(p, &[]);
        assert!(!second_joins_first(&mut s), "{p}");
    }
    // 2.4.9 plugged too; its rows are measured without it, and the field turns it on.
    assert!(second_joins_first(&mut sim("linux-2.4.9", &["reclaim.plug_empty_queue=true"])));
    // A task waiting on I/O runs tq_disk: after it the started head takes nothing more.
    let mut s = sim("linux-2.4.23aa1", &[]);
    second_joins_first(&mut s);
    s.k.run_tq_disk(2_000_000);
    s.k.disks[0].submit(3_000_000, 8192, 4096, true);
    assert!(!s.k.disks[0].last_merged());
}

#[test]
fn tq_disk_hands_the_writes_a_plug_held_to_the_kernel() {
    use vmlab_core::kernel::IoDone;
    let mut s = sim("linux-2.4.23aa1", &[]);
    // A write on the idle disk plugs it: its pages wait in the queue, not in the kernel's I/O.
    let t = s.k.disks[0].submit(0, 0, 4096, true);
    s.k.queue_io_done(t, 0, vec![7], true);
    assert!(s.k.io_queue.is_empty());
    // A task waiting on I/O at 5 ms runs tq_disk: the write starts then, and its completion
    // is queued with its pages.
    s.k.run_tq_disk(5_000_000);
    match s.k.io_queue.as_slice() {
        [(done, IoDone::Write { pages, disk: 0, irq: true })] => {
            assert_eq!(pages, &vec![7]);
            assert!(*done > 5_000_000 && *done == s.k.io_queue_first_write, "{done}");
        }
        q => panic!("one write expected, got {} entries", q.len()),
    }
    // Without the plug the write is booked and queued at once.
    let mut off = sim("linux-2.4.23aa1", &["reclaim.plug_empty_queue=false"]);
    let t = off.k.disks[0].submit(0, 0, 4096, true);
    off.k.queue_io_done(t, 0, vec![7], true);
    assert_eq!(off.k.io_queue.len(), 1);
}

#[test]
fn a_reader_whose_read_is_listed_sleeps_until_the_driver_takes_it() {
    use vmlab_core::kernel::{Ctx, IoDone};
    use vmlab_core::ll_rw_blk::UNPLUGGED;
    // An IDE drive (one request at a time): a write plugs the idle queue, tq_disk starts it.
    let mut s = sim("linux-2.4.23aa2", &["disk.hda.driver_depth=1"]);
    let t = s.k.disks[0].submit(0, 0, 4096, true);
    s.k.queue_io_done(t, 0, vec![7], true);
    s.k.run_tq_disk(0);
    // A read made while it is active is listed: no end yet, its page goes with the request.
    let r = s.k.disks[0].submit(0, 100 << 20, 4096, false);
    assert_eq!(r, UNPLUGGED);
    s.k.inflight.insert(9, r);
    s.k.queue_io_done(r, 0, vec![9], false);
    assert!(!s.k.io_queue.iter().any(|(_, d)| matches!(d, IoDone::Read { .. })));
    let ctx = Ctx { task: 3, ..Default::default() };
    assert_eq!(s.k.wait_on_read(&ctx, 9, r), UNPLUGGED, "its reader sleeps with no wakeup time");
    assert!(s.k.read_wakes.is_empty());
    // The drive frees: the BlkRun takes the read, and its reader is woken at its end.
    let at = s.k.disks[0].take_run().expect("a BlkRun when the write ends");
    s.k.disks[0].blk_run(at);
    s.k.collect_dispatched(0);
    let done = s.k.inflight[&9];
    assert!(done > at && done != UNPLUGGED, "{done}");
    assert_eq!(s.k.read_wakes, vec![(done, 3)]);
    assert!(s
        .k
        .io_queue
        .iter()
        .any(|(t, d)| *t == done && matches!(d, IoDone::Read { pages, .. } if pages == &vec![9])));
    // A task that comes to the page after that waits for the known end.
    assert_eq!(s.k.wait_on_read(&ctx, 9, r), done);
}
