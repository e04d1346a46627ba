//! 2.4's request queue in front of the device model: the back merge, the bounds' waits as a
//! disk reports them, a reader's wait for a request, the plug.

use super::*;
use crate::disk::Disk;

const MIB: u64 = 1024 * 1024;

#[test]
fn contiguous_buffers_queued_behind_a_busy_head_join_one_request() {
    // 33 one-page writes in slot order at one instant, as reclaimers' swap writes arrive:
    // the first starts at once (the active head takes no merge), the next 16 build one
    // request behind it, the last 16 another (64 KiB, max_sectors). Three commands.
    let mut d = Disk::preset("hdd").unwrap();
    let mut end = 0;
    for i in 0..33u64 {
        end = end.max(d.submit(0, 10 * MIB + i * 4096, 4096, true));
    }
    assert_eq!(end, 3 * 50_000 + 8_000_000 + 33 * 40_960);
    assert_eq!(d.stat().write_ios, 3);
    // Every merged buffer left the head where the next request begins: no second seek.
    assert_eq!(d.submit(0, 10 * MIB + 33 * 4096, 4096, true), end + 50_000 + 40_960);
    // A buffer in the other direction starts a request of its own: its own command.
    assert_eq!(d.submit(0, 10 * MIB + 34 * 4096, 4096, false), end + 2 * (50_000 + 40_960));
    assert_eq!(d.stat().write_ios + d.stat().read_ios, 5);
}

#[test]
fn under_the_sector_throttle_only_a_new_request_waits_for_a_batch_to_drain() {
    const KIB: u64 = 1024;
    let mut d = Disk::preset("hdd").unwrap();
    d.set_throttle_sectors(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
    // 69 writes of 60 KiB, scattered, at one instant: each finds ≤ 4 MiB queued and gets
    // its request; then 4,140 KiB are in flight (~0.15 s of this disk's work, under the
    // time backlog's 250 ms).
    let mut done = Vec::new();
    for i in 0..69u64 {
        done.push(d.submit(0, i * 10 * MIB, 60 * KIB, true));
        assert_eq!(d.throttle_wake(), Some(0), "write {i}");
    }
    // A buffer that back-merges into the last, queued request takes no request: no wait.
    d.submit(0, 68 * 10 * MIB + 60 * KIB, 4 * KIB, true);
    assert!(d.last_merged());
    assert_eq!(d.throttle_wake(), Some(0));
    // One that needs a request sleeps until ≤ 3 MiB are left: 4,144 KiB less 18 × 60 KiB.
    d.submit(0, 700 * MIB, 4 * KIB, true);
    assert_eq!(d.throttle_wake(), Some(done[17]));
    assert_eq!(d.request_wait(done[17], true), Some(0));
    // Without the throttle there is no such wait to report.
    let mut plain = Disk::preset("hdd").unwrap();
    plain.submit(0, 0, 4 * KIB, true);
    assert_eq!(plain.throttle_wake(), None);
}

#[test]
fn under_the_request_count_a_run_longer_than_max_sectors_takes_a_request_per_64_kib() {
    const KIB: u64 = 1024;
    let mut d = Disk::preset("hdd").unwrap();
    d.set_throttle_requests(QUEUE_NR_REQUESTS);
    // Four runs of 1 MiB, scattered, at one instant: 16 requests each, 64 in all — the
    // write list's share — so each got its requests at once.
    let mut done = Vec::new();
    for i in 0..4u64 {
        done.push(d.submit(0, i * 10 * MIB, MIB, true));
        assert_eq!(d.throttle_wake(), Some(0), "run {i}");
    }
    // The fifth finds none free and sleeps until 32 are released: the second run's last
    // request, which ends with that run's transfer.
    d.submit(0, 700 * MIB, 64 * KIB, true);
    assert_eq!(d.throttle_wake(), Some(done[1]));
    // A run of 64 KiB or less is one request, as before.
    let mut one = Disk::preset("hdd").unwrap();
    one.set_throttle_requests(QUEUE_NR_REQUESTS);
    for i in 0..64u64 {
        one.submit(0, i * 10 * MIB, 64 * KIB, true);
        assert_eq!(one.throttle_wake(), Some(0), "request {i}");
    }
    one.submit(0, 700 * MIB, 4 * KIB, true);
    assert!(one.throttle_wake().is_some_and(|w| w > 0));
}

#[test]
fn a_reader_that_finds_no_request_has_its_request_made_at_the_wakeup() {
    const KIB: u64 = 1024;
    let mut d = Disk::preset("raid10").unwrap();
    d.set_throttle_sectors(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
    // 90 scattered 60-KiB writes on the first stripe: 5,400 KiB, over max + batch (5 MiB).
    for i in 0..90u64 {
        d.submit(0, i * 150 * 64 * KIB, 60 * KIB, true);
    }
    // A read for the idle second stripe sleeps for the writers' wakeup, then goes.
    let done = d.submit(0, 64 * KIB, 4 * KIB, false);
    let wake = d.throttle_wake().unwrap();
    assert!(wake > 0);
    assert!(done > wake && done - wake < 20_000_000, "read done {done}, woken {wake}");
    // (Past 4 MiB the writers slept too.)
    assert_eq!((d.request_waits().waits[0], d.request_waits().wait_ns[0]), (1, wake));
}

/// hdd: a 4-KiB request that seeks (command latency + seek + transfer).
const HDD_SEEK_4K: u64 = 50_000 + 8_000_000 + 40_960;

#[test]
fn a_write_to_an_idle_plugged_queue_does_not_start_until_tq_disk_runs() {
    const MS: u64 = 1_000_000;
    for plugging in [false, true] {
        let mut d = Disk::preset("hdd").unwrap();
        d.set_plugging(plugging);
        // The first write finds the queue empty: plugged, it waits in the queue.
        let guess = d.submit(0, 100 * MIB, 4096, true);
        assert_eq!(d.hold_pages(vec![1]).is_none(), plugging, "held with its pages");
        assert_eq!(d.in_flight(0), !plugging as usize);
        // 1 ms later a contiguous buffer joins it (the plugged queue's head is not active);
        // unplugged, the first is under way and the second makes a request of its own.
        d.submit(MS, 100 * MIB + 4096, 4096, true);
        assert_eq!(d.last_merged(), plugging);
        assert_eq!(d.hold_pages(vec![2]).is_none(), plugging);
        let mut out = Vec::new();
        d.take_dispatched(&mut out);
        assert!(out.is_empty(), "nothing goes before tq_disk");
        d.unplug(5 * MS);
        d.take_dispatched(&mut out);
        if plugging {
            // One 8-KiB request from the unplug: its seek and both pages' transfer.
            assert_eq!(out, vec![(5 * MS + HDD_SEEK_4K + 40_960, vec![1, 2])]);
            assert_eq!(d.stat().write_ios, 1);
            let p = d.plug_stats().unwrap();
            assert_eq!((p.plugs, p.merges, p.plugged_ns, p.most_held_bytes), (1, 1, 5 * MS, 8192));
        } else {
            assert_eq!(guess, HDD_SEEK_4K);
            assert!(out.is_empty());
        }
        // Unplugged, the head is active: the next buffer makes a request of its own (without
        // the plug the second buffer's request, queued behind the head, takes it).
        d.submit(6 * MS, 100 * MIB + 8192, 4096, true);
        assert_eq!(d.last_merged(), !plugging);
    }
}

#[test]
fn a_read_unplugs_the_queue_and_goes_behind_what_it_held() {
    const MS: u64 = 1_000_000;
    let mut d = Disk::preset("hdd").unwrap();
    d.set_plugging(true);
    d.submit(0, 100 * MIB, 4096, true);
    d.hold_pages(vec![1]);
    // A reader's wait (`sync_page` → `tq_disk`) at 2 ms: the held write goes first, at 2 ms,
    // and the read after it on the spindle.
    let read = d.submit(2 * MS, 500 * MIB, 4096, false);
    let mut out = Vec::new();
    d.take_dispatched(&mut out);
    let write = 2 * MS + HDD_SEEK_4K;
    assert_eq!(out, vec![(write, vec![1])]);
    // Behind it on the spindle, with a seek of its own (shortened by the queued command).
    assert!(read > write + 5 * MS && read < write + HDD_SEEK_4K, "read {read}, write {write}");
    let p = d.plug_stats().unwrap();
    assert_eq!((p.plugs, p.plugged_ns, p.longest_ns), (1, 2 * MS, 2 * MS));
    // A read on an idle queue does not plug it: its reader unplugs at once.
    let mut idle = Disk::preset("hdd").unwrap();
    idle.set_plugging(true);
    assert_eq!(idle.submit(0, 500 * MIB, 4096, false), HDD_SEEK_4K);
    assert_eq!(idle.plug_stats().unwrap().plugs, 0);
}

#[test]
fn the_longest_plug_is_the_longest_time_to_the_next_tq_disk() {
    const MS: u64 = 1_000_000;
    // A write every 30 ms (each finds the disk idle), and `tq_disk` run 3 ms after the first,
    // 7 ms after the second, … as waiters come: each plug lasts until its unplug, no longer.
    let mut d = Disk::preset("hdd").unwrap();
    d.set_plugging(true);
    let mut out = Vec::new();
    for (i, gap) in [3, 7, 1, 12, 5].into_iter().enumerate() {
        let at = i as u64 * 30 * MS;
        d.submit(at, (i as u64 + 1) * 100 * MIB, 4096, true);
        d.hold_pages(vec![i as u32]);
        d.unplug(at + gap * MS);
        d.take_dispatched(&mut out);
        assert_eq!(out.last(), Some(&(at + gap * MS + HDD_SEEK_4K, vec![i as u32])));
    }
    let p = d.plug_stats().unwrap();
    assert_eq!((p.plugs, p.plugged_ns, p.longest_ns), (5, 28 * MS, 12 * MS));
    // Nobody runs it: the write never goes.
    d.submit(300 * MS, 0, 4096, true);
    d.hold_pages(vec![9]);
    out.clear();
    d.take_dispatched(&mut out);
    assert!(out.is_empty() && d.in_flight(10_000 * MS) == 0);
}

#[test]
fn a_writer_that_must_wait_for_a_request_unplugs_what_the_queue_held() {
    const KIB: u64 = 1024;
    let mut d = Disk::preset("hdd").unwrap();
    d.set_throttle_sectors(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
    d.set_plugging(true);
    // 69 scattered 60-KiB writes at one instant, each a request: the first plugs the queue,
    // all are held, and each is counted as made: the 69th finds 4,080 KiB, not over 4 MiB.
    for i in 0..69u64 {
        d.submit(0, i * 10 * MIB, 60 * KIB, true);
        assert_eq!(d.throttle_wake(), Some(0), "write {i}");
        d.hold_pages(vec![i as u32]);
    }
    let mut out = Vec::new();
    d.take_dispatched(&mut out);
    assert!(out.is_empty());
    // The next one finds 4,140 KiB: `__get_request_wait` unplugs, so all 69 go now, and it
    // sleeps until ≤ 3 MiB are left: after the 18th request ends.
    d.submit(0, 700 * MIB, 4 * KIB, true);
    d.take_dispatched(&mut out);
    assert_eq!(out.len(), 69);
    assert_eq!(d.throttle_wake(), Some(out[17].0));
    assert_eq!(d.request_waits().waits[1], 1);
    let p = d.plug_stats().unwrap();
    assert!(!p.plugged() && p.most_held_bytes == 69 * 60 * KIB);
}

#[test]
fn under_the_elevator_a_read_on_a_plugged_queue_goes_where_it_sorts_among_the_held_writes() {
    const MS: u64 = 1_000_000;
    const KIB: u64 = 1024;
    // Eight held 64-KiB writes, 1 MiB apart, ascending; a read at 3.5 MiB at 2 ms.
    let run = |elv: Option<ElevatorLinus>, read_at: u64| {
        let mut d = Disk::preset("hdd").unwrap();
        d.set_plugging(true);
        d.set_elevator_linus(elv);
        for i in 0..8u64 {
            d.submit(0, 100 * MIB + i * MIB, 64 * KIB, true);
            d.hold_pages(vec![i as u32]);
        }
        let read = d.submit(2 * MS, read_at, 4096, false);
        let mut out = Vec::new();
        d.take_dispatched(&mut out);
        assert_eq!(out.len(), 8);
        let before = out.iter().filter(|(done, _)| *done < read).count();
        // Writes still go in sector order either way.
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
        (before, read)
    };
    let elv = Some(ElevatorLinus { read_latency: 128, write_latency: 512 });
    let (fifo, fifo_read) = run(None, 100 * MIB + 3584 * KIB);
    let (sorted, sorted_read) = run(elv, 100 * MIB + 3584 * KIB);
    assert_eq!((fifo, sorted), (8, 4), "writes served before the read");
    assert!(sorted_read + 3 * MS < fifo_read, "sorted {sorted_read}, fifo {fifo_read}");
    // A read below every held write sorts between none: it goes behind them all.
    assert_eq!(run(elv, 10 * MIB).0, 8);
}

/// An IDE drive behind 2.4's queue as a list (`driver_depth` 1) under `elv`, no plug: a
/// write at 0 the driver takes at once, then writes of 32 KiB at 100 + `listed` MiB
/// (ascending), all at 0.
fn ide_listing(elv: Option<ElevatorLinus>, listed: &[u64]) -> Disk {
    let mut d = Disk::preset("hdd").unwrap();
    d.set_driver_depth(1);
    d.set_elevator_linus(elv);
    d.submit(0, 0, 32 * 1024, true);
    d.hold_pages(vec![0]);
    for (i, &mib) in listed.iter().enumerate() {
        d.submit(0, 100 * MIB + mib * MIB, 32 * 1024, true);
        assert!(d.hold_pages(vec![1 + i as u32]).is_none(), "write {i} is listed");
    }
    d
}

/// A read of page `page` made at `now` at `offset`: its end, once the driver has taken it —
/// at once, or at the `BlkRun`s that follow while it stays listed.
fn read_taken(d: &mut Disk, now: u64, offset: u64, page: Pfn) -> u64 {
    let done = d.submit(now, offset, 4096, false);
    if done != UNPLUGGED {
        return done;
    }
    assert!(d.hold_pages(vec![page]).is_none(), "a listed read's page goes with its request");
    let mut reads = Vec::new();
    loop {
        d.take_dispatched_reads(&mut reads);
        if let Some(&(done, _)) = reads.iter().find(|(_, pages)| pages.contains(&page)) {
            return done;
        }
        let at = d.take_run().expect("the read is still listed: a BlkRun comes");
        d.blk_run(at);
    }
}

#[test]
fn a_listed_read_is_taken_only_when_the_drive_frees_and_later_requests_may_pass_it() {
    // The active write at 0, writes listed at 101 and 102 MiB; a read at 150 MiB sorts at the
    // tail. 2.4.23 lists it (`__make_request` does not call `request_fn`; `ide_do_request`
    // takes the head only when `hwgroup->busy` clears): its end is not known when it is made.
    let elv = Some(ElevatorLinus { read_latency: 128, write_latency: 512 });
    let mut d = ide_listing(elv, &[1, 2]);
    assert_eq!(d.submit(0, 150 * MIB, 4096, false), UNPLUGGED);
    assert!(d.hold_pages(vec![50]).is_none());
    // A write made after it at 110 MiB sorts between 102 and the read: it goes first.
    d.submit(0, 110 * MIB, 32 * 1024, true);
    assert!(d.hold_pages(vec![60]).is_none());
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    while let Some(at) = d.take_run() {
        d.blk_run(at);
    }
    d.take_dispatched(&mut writes);
    d.take_dispatched_reads(&mut reads);
    assert_eq!(reads.len(), 1, "the read went when the drive reached it: {reads:?}");
    assert_eq!(reads[0].1, vec![50]);
    let passed = writes.iter().find(|(_, pages)| pages == &vec![60]).expect("the later write").0;
    assert!(passed < reads[0].0, "the write made after the read ends first: {passed} against {}", reads[0].0);
    // With the drive idle the driver takes a read at once: its end is known as it is made.
    let mut idle = Disk::preset("hdd").unwrap();
    idle.set_driver_depth(1);
    let done = idle.submit(0, 150 * MIB, 4096, false);
    assert!(done != UNPLUGGED && done > 0);
}

#[test]
fn an_ide_drive_takes_its_next_request_only_when_the_active_one_ends() {
    let mut d = ide_listing(None, &[1, 2]);
    let mut out = Vec::new();
    d.take_dispatched(&mut out);
    assert!(out.is_empty(), "nothing listed has been taken");
    // The first write went to the drive as it was made; the next goes when it ends.
    let first = d.queued_until();
    assert_eq!(d.take_run(), Some(first));
    d.blk_run(first);
    d.take_dispatched(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].1, vec![1]);
    assert!(out[0].0 > first);
    // Asked before it ended, the driver has no room: the third waits for the second.
    d.blk_run(out[0].0 - 1);
    d.take_dispatched(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(d.take_run(), Some(out[0].0));
    d.blk_run(out[0].0);
    d.take_dispatched(&mut out);
    assert_eq!(out.len(), 2);
    assert!(out[1].0 > out[0].0);
    assert_eq!(d.take_run(), None, "nothing left listed");
    // Without a driver depth the device took all three as they were made.
    let mut plain = Disk::preset("hdd").unwrap();
    let ends: Vec<u64> = [0, 101, 102].iter().map(|&m| plain.submit(0, m * MIB, 32 * 1024, true)).collect();
    assert_eq!(ends[0], first);
    assert!(ends[2] <= out[1].0, "the list adds no time of its own: {} against {}", ends[2], out[1].0);
}

#[test]
fn under_the_elevator_a_read_goes_ahead_of_the_listed_writes_it_sorts_before() {
    let elv = Some(ElevatorLinus { read_latency: 128, write_latency: 512 });
    let listed = [1, 2, 3, 4, 5, 6, 7];
    let run = |elv: Option<ElevatorLinus>, read_at: u64| {
        let mut d = ide_listing(elv, &listed);
        let read = read_taken(&mut d, 1_000_000, read_at, 99);
        let mut out = Vec::new();
        d.take_dispatched(&mut out);
        // The writes taken with the read all end before it; those behind it are still listed.
        assert!(out.iter().all(|&(done, _)| done < read));
        (out.len(), read, d.take_run().is_some())
    };
    let at = 100 * MIB + 3584 * 1024;
    let (fifo, fifo_read, fifo_left) = run(None, at);
    let (sorted, sorted_read, sorted_left) = run(elv, at);
    // Arrival order: all seven listed writes go before it; sorted: the three below it.
    assert_eq!((fifo, sorted), (7, 3));
    assert!(!fifo_left && sorted_left, "four writes still listed behind the sorted read");
    assert!(sorted_read + 10_000_000 < fifo_read, "sorted {sorted_read}, fifo {fifo_read}");
    // A read below every listed write sorts between none of them: it waits behind them all.
    assert_eq!(run(elv, 10 * MIB).0, 7);
}

#[test]
fn on_the_list_a_request_passed_its_budget_times_is_not_passed_again() {
    // Write budget 2: listed writes at 1, 10 and 20 MiB behind the active one.
    let run = |write_latency: i32| {
        let elv = Some(ElevatorLinus { read_latency: 128, write_latency });
        let mut d = ide_listing(elv, &[1, 10, 20]);
        // All while the first write is active. A read at 5 MiB goes between 1 and 10, listed:
        // 10 and 20 are passed once.
        assert_eq!(d.submit(0, 100 * MIB + 5 * MIB, 4096, false), UNPLUGGED);
        // A write at 12 MiB goes between 10 and 20: 20 is passed a second time.
        d.submit(0, 100 * MIB + 12 * MIB, 32 * 1024, true);
        d.hold_pages(vec![9]);
        // A read at 15 MiB sorts between 12 and 20.
        let read = read_taken(&mut d, 0, 100 * MIB + 15 * MIB, 98);
        let mut out = Vec::new();
        d.take_dispatched(&mut out);
        out.iter().any(|(done, pages)| pages == &vec![3] && *done < read)
    };
    assert!(!run(512), "with budget left, the write at 20 MiB is passed again");
    assert!(run(2), "used up, it goes before the read");
}

#[test]
fn on_the_list_a_buffer_merges_at_the_back_or_front_of_any_listed_request() {
    let mut d = ide_listing(None, &[1, 2]);
    // Behind the listed request at 101 MiB (not the last one made): one request, no new one.
    d.submit(0, 101 * MIB + 32 * 1024, 4096, true);
    assert!(d.last_merged());
    assert!(d.hold_pages(vec![7]).is_none());
    // In front of the one at 102 MiB.
    d.submit(0, 102 * MIB - 4096, 4096, true);
    assert!(d.last_merged());
    assert!(d.hold_pages(vec![8]).is_none());
    let mut out = Vec::new();
    let mut t = d.queued_until();
    while let Some(at) = d.take_run() {
        t = t.max(at);
        d.blk_run(t);
    }
    d.take_dispatched(&mut out);
    assert_eq!(out.len(), 2, "two listed requests, each with its merged buffer");
    assert_eq!(out[0].1, vec![1, 7]);
    assert_eq!(out[1].1, vec![2, 8]);
    assert_eq!(d.stat().write_ios, 3);
}
