use super::*;
use crate::machine::MachineConfig;
use crate::mmzone::Mt;
use crate::page_writeback::FlushAction;

/// A 2.4.9 box with 2.4.9's buffer flushing, 4 MiB of DMA and 16 MiB of Normal, and a file.
fn machine() -> (Kernel, u32) {
    let cfg = MachineConfig::of_zones("i386", 2, &[(ZoneType::Dma, 1024), (ZoneType::Normal, 4096)]);
    let mut p = crate::profiles::first_with_engine(crate::profiles::Engine::Riel24);
    p.bdflush = true;
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    let file = k.file_create("dd", 4096 << 12, 0, false);
    (k, file)
}

/// Page `i` of `file` in the page cache and dirty, its buffer on BUF_DIRTY; `balance`: as
/// write() does it (`balance_dirty` after), else only `__mark_dirty`.
fn dirty(k: &mut Kernel, ctx: &mut Ctx, file: u32, i: u64, balance: bool) -> Pfn {
    let q = k.rmqueue(1, 0, Mt::Movable).expect("free page");
    k.fr.set(q, pg::UPTODATE);
    k.add_to_page_cache(ctx, file, i, q);
    crate::page_writeback::set_page_dirty(k, ctx, q);
    if balance {
        mark_buffer_dirty(k, ctx, q);
    } else {
        mark_dirty(k, ctx, q);
    }
    q
}

fn writer() -> Ctx {
    Ctx { cpu: 1, task: 2, ..Default::default() }
}

/// HighMem is not in the GFP_KERNEL zonelist; a zone whose pages are all taken (off every
/// list) still counts its `pages_high`.
#[test]
fn nr_free_buffer_pages_counts_lowmem_free_and_inactive_at_least_pages_high() {
    let zones = [(ZoneType::Dma, 1024), (ZoneType::Normal, 4096), (ZoneType::HighMem, 8192)];
    let cfg = MachineConfig::of_zones("i386", 2, &zones);
    let k0 = crate::profiles::first_with_engine(crate::profiles::Engine::Riel24);
    let mut k = Kernel::new(k0, cfg, 1).expect("kernel");
    let (dma, normal) = (k.zones[0].free_pages, k.zones[1].free_pages);
    assert!(k.zones[2].free_pages > 0);
    assert_eq!(nr_free_buffer_pages(&k), dma + normal);
    while k.zones[0].free_pages > 10 {
        k.rmqueue(0, 0, Mt::Movable).expect("free page");
    }
    assert_eq!(nr_free_buffer_pages(&k), normal + k.zones[0].wmark[2]);
}

/// Below `nfract` write() submits nothing; the first buffer dirtied over it makes the writer
/// write one batch of 32 from the head of BUF_DIRTY itself, without waiting or waking bdflush.
#[test]
fn over_nfract_the_writer_writes_32_buffers_itself_and_does_not_wait() {
    let (mut k, file) = machine();
    let mut dd = writer();
    let mut i = 0;
    let mut first = None;
    while stats(&mut k).by_writer == 0 {
        assert_eq!(k.g.writeback, 0, "nothing written below nfract");
        first = first.or(bd(&mut k).dirty.front().copied());
        dirty(&mut k, &mut dd, file, i, true);
        i += 1;
        assert!(i < 4000);
    }
    let first = first.expect("dirty buffers");
    let s = *stats(&mut k);
    assert_eq!((s.by_writer, s.balance_async, s.balance_sync), (NRSYNC as u64, 1, 0));
    assert_eq!(k.g.writeback, NRSYNC as u64);
    assert!(k.fr.has(first.p, pg::WRITEBACK), "the oldest dirty buffer went first");
    assert_eq!(dd.sleep_ns, 0);
    assert!(!k.wbs[0].wanted, "2.4.9 wakes bdflush only over nfract_sync");
}

/// Over `nfract_sync` the writer writes its batch, sleeps until the oldest buffer in flight
/// completes, and wakes bdflush.
#[test]
fn over_nfract_sync_the_writer_waits_on_the_oldest_locked_buffer_and_wakes_bdflush() {
    let (mut k, file) = machine();
    let mut dd = writer();
    let mut i = 0;
    while balance_dirty_state(&k) < 1 {
        dirty(&mut k, &mut dd, file, i, false);
        i += 1;
    }
    balance_dirty(&mut k, &mut dd);
    let s = *stats(&mut k);
    assert_eq!((s.by_writer, s.balance_sync, s.writer_waits), (NRSYNC as u64, 1, 1));
    let oldest = bd(&mut k).locked.front().copied().expect("in flight").0;
    assert!(dd.sleep_ns > 0 && dd.clock() + dd.sleep_ns >= oldest, "asleep until {oldest}, {}", dd.sleep_ns);
    assert!(k.wbs[0].wanted);
}

/// bdflush, woken, writes 32-buffer rounds while the dirty buffers stay over `nfract`, then
/// sleeps until kupdate is due.
#[test]
fn bdflush_writes_rounds_until_the_dirty_buffers_are_under_nfract() {
    let (mut k, file) = machine();
    let mut dd = writer();
    let mut i = 0;
    while balance_dirty_state(&k) < 0 {
        dirty(&mut k, &mut dd, file, i, false);
        i += 1;
    }
    for _ in 0..200 {
        dirty(&mut k, &mut dd, file, i, false);
        i += 1;
    }
    let mut fl = Ctx { cpu: 0, task: 3, is_flusher: true, ..Default::default() };
    bd(&mut k).kupdate_at = 60_000_000_000;
    wakeup_bdflush(&mut k);
    let mut rounds = 0;
    loop {
        match bdflush_pass(&mut k, &mut fl, 0) {
            FlushAction::More => rounds += 1,
            FlushAction::Sleep(ns) if k.wbs[0].wanted => fl.now += ns,
            FlushAction::Sleep(ns) => {
                assert_eq!(fl.clock() + ns, 60_000_000_000, "asleep until kupdate");
                break;
            }
        }
        assert!(rounds < 1000);
    }
    assert_eq!(balance_dirty_state(&k), -1);
    let s = *stats(&mut k);
    assert_eq!(s.by_bdflush % NRSYNC as u64, 0);
    assert_eq!(s.by_bdflush, (rounds + 1) * NRSYNC as u64);
    assert!(rounds >= 6, "over 200 buffers above the line: {rounds}");
}

/// kupdate writes from the head while the head buffer is older than `age_buffer` — whole
/// 32-buffer batches, so the last one takes younger buffers with it (2.4.9's
/// `write_some_buffers` has no age test of its own; 2.4.10's `oldonly` added one).
#[test]
fn kupdate_writes_batches_while_the_head_buffer_is_30_s_old() {
    let (mut k, file) = machine();
    let mut dd = writer();
    for i in 0..40 {
        dirty(&mut k, &mut dd, file, i, false);
    }
    dd.now = 20_000_000_000;
    for i in 40..80 {
        dirty(&mut k, &mut dd, file, i, false);
    }
    let mut fl = Ctx { cpu: 0, task: 3, is_flusher: true, now: 29_000_000_000, ..Default::default() };
    let early = bdflush_pass(&mut k, &mut fl, 0);
    assert!(matches!(early, FlushAction::Sleep(_)));
    assert_eq!(stats(&mut k).by_kupdate, 0, "nothing is 30 s old at 29 s");
    fl.now = 34_000_000_000;
    bdflush_pass(&mut k, &mut fl, 0);
    assert_eq!(stats(&mut k).by_kupdate, 2 * NRSYNC as u64);
    assert_eq!(k.g.dirty, 80 - 2 * NRSYNC as u64);
    assert_eq!(bd(&mut k).kupdate_at, 34_000_000_000 + 5_000_000_000);
}

/// A buffer under I/O and dirty again is stepped over and stays at the head of BUF_DIRTY.
#[test]
fn a_locked_dirty_buffer_is_stepped_over_and_stays_first() {
    let (mut k, file) = machine();
    let mut dd = writer();
    let pages: Vec<Pfn> = (0..40).map(|i| dirty(&mut k, &mut dd, file, i, false)).collect();
    k.fr.set(pages[0], pg::WRITEBACK);
    assert!(write_some_buffers(&mut k, &mut dd, Who::Writer));
    assert!(k.fr.has(pages[0], pg::DIRTY));
    assert!(k.fr.has(pages[NRSYNC], pg::WRITEBACK) && !k.fr.has(pages[NRSYNC + 1], pg::WRITEBACK));
    assert_eq!(bd(&mut k).dirty.front().map(|b| b.p), Some(pages[0]));
}

/// `bdf_prm` is the row's tunables: a lower `nfract` has the writer start writing with fewer
/// dirty buffers, a shorter `age_buffer` has kupdate write younger ones, and `interval` 0
/// stops kupdate however old the buffers are.
#[test]
fn bdf_prm_comes_from_the_profile_tunables() {
    let dirtied_before_writing = |nfract: u64| {
        let (mut k, file) = machine();
        k.profile.tunables.bdflush_nfract = nfract;
        let mut dd = writer();
        let mut i = 0;
        while stats(&mut k).by_writer == 0 {
            dirty(&mut k, &mut dd, file, i, true);
            i += 1;
            assert!(i < 4000);
        }
        i
    };
    let (at30, at10) = (dirtied_before_writing(30), dirtied_before_writing(10));
    assert!(at10 * 2 < at30, "nfract 10: {at10} buffers, nfract 30: {at30}");

    // Buffers written by kupdate at 12 s, and when the task next wakes (None: until woken).
    let kupdated_at_12_s = |age_buffer: u64, interval: u64| {
        let (mut k, file) = machine();
        k.profile.tunables.bdflush_age_buffer = age_buffer;
        k.profile.tunables.bdflush_interval = interval;
        let mut dd = writer();
        for i in 0..40 {
            dirty(&mut k, &mut dd, file, i, false);
        }
        let mut fl = Ctx { cpu: 0, task: 3, is_flusher: true, now: 12_000_000_000, ..Default::default() };
        let wakes = match bdflush_pass(&mut k, &mut fl, 0) {
            FlushAction::Sleep(ns) if ns >= u64::MAX / 4 => None,
            FlushAction::Sleep(ns) => Some(fl.clock() + ns),
            FlushAction::More => Some(0),
        };
        (stats(&mut k).by_kupdate, wakes)
    };
    assert_eq!(kupdated_at_12_s(3000, 500), (0, Some(17_000_000_000)), "30 s old by default");
    assert_eq!(kupdated_at_12_s(1000, 500), (40, Some(17_000_000_000)), "10 s old at 12 s");
    assert_eq!(kupdated_at_12_s(1000, 0), (0, None), "kupdate stopped, bdflush asleep until woken");
}
