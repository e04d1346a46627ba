use super::*;
use crate::machine::MachineConfig;
use crate::mm_types::pg;
use crate::mmzone::{Mt, ZoneType};
use crate::page_writeback::{flusher_pass, set_page_dirty, wakeup_flusher_threads};
use crate::stats::vmstat::Vm;

const PER_PAGE: u64 = 500;

/// A kernel of the default row (6.8) whose flusher has written one io_end of 2,048 pages (eight 256-page requests)
/// of a file, each third page marked PG_reclaim and active, as reclaim leaves the pages it met
/// under writeback: the kernel, the file, and when the worker starts (its last request's end).
fn one_io_end() -> (Kernel, u32, u64) {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 16)]);
    let mut k =
        Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).expect("profile"), cfg, 1).expect("kernel");
    let mut d = crate::disk::Disk::preset("ssd").expect("preset");
    d.io_end_pages = 2048;
    k.disks.push(d);
    k.cost.end_writeback = PER_PAGE;
    let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
    let file = k.file_create("f", 1 << 30, 0, false);
    for idx in 0..2048 {
        let p = k.rmqueue(0, 0, Mt::Movable).expect("a free page");
        k.fr.set(p, pg::UPTODATE);
        k.add_to_page_cache(&mut ctx, file, idx, p);
        set_page_dirty(&mut k, &ctx, p);
    }
    wakeup_flusher_threads(&mut k);
    flusher_pass(&mut k, &mut ctx, 0);
    assert_eq!(k.g.writeback, 2048);
    for idx in (0..2048).step_by(3) {
        let p = page(&k, file, idx);
        k.fr.set(p, pg::RECLAIM | pg::ACTIVE);
    }
    let start = k.releases.q[0].start;
    (k, file, start)
}

fn page(k: &Kernel, file: u32, idx: usize) -> Pfn {
    k.files[file as usize].pages[idx]
}

/// The worker's order: the last request (indices 1792–2047) first, in index order, the first
/// (0–255) last.
fn rank(idx: usize) -> usize {
    let (run, off) = (idx / 256, idx % 256);
    (7 - run) * 256 + off
}

/// What the ends have done, to compare two ways of ending the same folios.
fn counts(k: &Kernel) -> [u64; 6] {
    let node = &k.nodes[0].reclaim_wait;
    [
        k.g.writeback,
        k.ev.get(Vm::NrWritten),
        k.ev.get(Vm::Pgrotated),
        k.disks[0].wb.nr_writeback,
        k.disks[0].wb.written,
        node.throttled_written,
    ]
}

/// Each folio's end time follows from its rank; a path at clock `t` finds the ranks whose time
/// is ≤ `t` clean and every other folio of the io_end still under writeback.
#[test]
fn a_path_at_t_finds_the_ranks_ended_by_t_clean_and_the_rest_under_writeback() {
    let (mut k, file, start) = one_io_end();
    for idx in [0, 255, 256, 1791, 1792, 2047] {
        let end = start + (rank(idx) as u64 + 1) * PER_PAGE;
        assert_eq!(k.releases.end_of(page(&k, file, idx)), Some(end), "index {idx}");
    }
    // A reclaimer mid-quantum, 100.5 folios into the release (ahead of the event loop).
    let t = start + 100 * PER_PAGE + PER_PAGE / 2;
    catch_up(&mut k, t);
    for idx in 0..2048 {
        let under = k.fr.has(page(&k, file, idx), pg::WRITEBACK);
        assert_eq!(under, rank(idx) >= 100, "index {idx} (rank {}) at +{} ns", rank(idx), t - start);
    }
    assert_eq!(k.g.writeback, 2048 - 100);
    assert_eq!(k.releases.end_of(page(&k, file, 1892)), Some(start + 101 * PER_PAGE));
    assert_eq!(k.releases.end_of(page(&k, file, 1891)), None, "ended");
}

/// A folio a path ended at its clock is not ended again when the event loop, behind that
/// clock, delivers the worker's event for its request: the counts move only by the ranks
/// that end after it.
#[test]
fn a_folio_ended_at_a_paths_clock_is_not_ended_again() {
    let (mut k, _, start) = one_io_end();
    catch_up(&mut k, start + 200 * PER_PAGE);
    let before = counts(&k);
    assert_eq!(before[1], 200);
    // The first request's event (256 ends) at its instant, after the path's clock.
    let mut q: Vec<_> =
        std::mem::take(&mut k.io_queue).into_iter().filter(|(_, d)| matches!(d, IoDone::Release { .. })).collect();
    q.sort_by_key(|&(t, _)| t);
    let (t, d) = q.remove(0);
    assert_eq!(t, start + 256 * PER_PAGE);
    assert!(matches!(d, IoDone::Release { ends: 256, .. }));
    // An event before the path's clock finds nothing to do.
    k.now = start + 150 * PER_PAGE;
    k.io_complete(&mut Ctx::default(), IoDone::Release { disk: 0, ends: 0 });
    assert_eq!(counts(&k), before);
    k.now = t;
    k.io_complete(&mut Ctx::default(), d);
    let after = counts(&k);
    assert_eq!((after[0], after[1]), (2048 - 256, 256), "56 more ended, none twice");
}

/// Ending the folios lazily — by paths at clocks ahead of the event loop and by events behind
/// them, in any mix — leaves every count as ending each folio eagerly at its own instant does.
#[test]
fn lazy_ends_count_as_eager_per_folio_ends() {
    let (mut lazy, _, start) = one_io_end();
    let (mut eager, _, _) = one_io_end();
    let pages = eager.releases.q[0].pages.clone();
    // A throttled reclaimer on both, so that `acct_reclaim_writeback` counts.
    for k in [&mut lazy, &mut eager] {
        let mut w = Ctx { task: 5, now: start, ..Ctx::default() };
        crate::vmscan::throttle::reclaim_throttle(k, &mut w, 0, crate::vmscan::throttle::ThrottleReason::Writeback);
    }
    for t in [
        start + 7 * PER_PAGE,
        start + 3 * PER_PAGE,
        start + 1000 * PER_PAGE + 1,
        start + 999 * PER_PAGE,
        start + 4096 * PER_PAGE,
    ] {
        lazy.now = t.min(start + 999 * PER_PAGE);
        catch_up(&mut lazy, t);
    }
    for (r, &p) in pages.iter().enumerate() {
        eager.now = start + (r as u64 + 1) * PER_PAGE;
        let mut ctx = Ctx { now: eager.now, ..Ctx::default() };
        crate::page_writeback::end_page_writeback(&mut eager, &mut ctx, p);
        crate::vmscan::writeback_done(&mut eager, &[p]);
    }
    assert_eq!(counts(&lazy), counts(&eager));
    assert_eq!(counts(&lazy)[..2], [0, 2048]);
    assert!(counts(&lazy)[2] > 600, "PG_reclaim folios rotated: {:?}", counts(&lazy));
    assert_eq!(lazy.throttle_wakeups, eager.throttle_wakeups);
    let woken = |k: &Kernel| k.nodes[0].reclaim_wait.waiters[0].woken_at;
    assert_eq!(woken(&lazy), woken(&eager));
    assert!(lazy.releases.q.is_empty() && lazy.releases.due == u64::MAX);
}

/// A reclaimer throttled on writeback as the release begins wakes at the 33rd folio's end
/// (`__acct_reclaim_writeback`: more than SWAP_CLUSTER_MAX written), not at its request's
/// 256th: the throttle queues an event at that instant.
#[test]
fn a_throttled_reclaimer_wakes_at_the_33rd_folio() {
    let (mut k, file, start) = one_io_end();
    k.io_queue.clear();
    let mut w = Ctx { task: 7, now: start, ..Ctx::default() };
    crate::vmscan::throttle::reclaim_throttle(&mut k, &mut w, 0, crate::vmscan::throttle::ThrottleReason::Writeback);
    let armed: Vec<u64> = k.io_queue.iter().map(|&(t, _)| t).collect();
    assert_eq!(armed, vec![start + 33 * PER_PAGE]);
    k.now = start + 32 * PER_PAGE;
    catch_up(&mut k, start + 32 * PER_PAGE);
    assert!(k.throttle_wakeups.is_empty(), "32 written is not more than 32");
    k.now = armed[0];
    k.io_complete(&mut Ctx::default(), IoDone::Release { disk: 0, ends: 0 });
    assert_eq!(k.throttle_wakeups, vec![7]);
    assert_eq!(k.nodes[0].reclaim_wait.waiters[0].woken_at, Some(start + 33 * PER_PAGE));
    assert!(k.fr.has(page(&k, file, 0), pg::WRITEBACK), "the extent's first folio is still under writeback");
    assert_eq!(k.g.writeback, 2048 - 33);
}

/// One worker per disk, one io_end at a time: a second io_end whose last bio completes while
/// the first is being released starts where the first ends.
#[test]
fn the_worker_releases_one_io_end_at_a_time() {
    let (mut k, _, start) = one_io_end();
    let first_end = start + 2048 * PER_PAGE;
    assert_eq!(k.releases.idle_at(0), first_end);
    let pages: Vec<Pfn> = (0..10).map(|_| k.rmqueue(0, 0, Mt::Movable).expect("page")).collect();
    release_io_end(&mut k, 0, start + 10, pages, [10u32].into_iter());
    assert_eq!(k.releases.q[1].start, first_end);
    assert_eq!(k.releases.idle_at(0), first_end + 10 * PER_PAGE);
}
