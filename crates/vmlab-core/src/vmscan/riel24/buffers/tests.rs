use super::*;
use crate::machine::MachineConfig;
use crate::mmzone::{Mt, ZoneType};
use crate::vmscan::riel24::scan::{page_launder, LaunderEnd};
use crate::vmscan::riel24::{do_try_to_free_pages, parked, zone_free, SLOT_DIRTY};

/// A 2.4.9 box whose Normal zone is below pages_low (a free shortage, no free plenty), with
/// `n` pages of a file written by write() on inactive_dirty: dirty buffers, no page lock.
fn written(n: u64, buffer_dirtying: bool) -> (Kernel, Vec<Pfn>) {
    let cfg = MachineConfig::of_zones("i386", 2, &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384)]);
    let mut p = crate::profiles::first_with_engine(crate::profiles::Engine::Riel24);
    p.write_dirties_buffers = buffer_dirtying;
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    let file = k.file_create("dd", n << 12, 0, false);
    let mut dd = Ctx { cpu: 1, task: 2, ..Default::default() };
    let mut pages = Vec::new();
    for i in 0..n {
        let q = k.rmqueue(1, 0, Mt::Movable).expect("free page");
        k.fr.set(q, pg::UPTODATE);
        k.add_to_page_cache(&mut dd, file, i, q);
        crate::page_writeback::set_page_dirty(&mut k, &dd, q);
        crate::vmscan::page_dirtied_by_write(&mut k, &mut dd, q, true);
        pages.push(q);
    }
    while zone_free(&k, 1) >= k.zones[1].wmark[1] {
        k.rmqueue(1, 0, Mt::Movable).expect("free page");
    }
    (k, pages)
}

fn kswapd() -> Ctx {
    Ctx { cpu: 0, task: 1, is_kswapd: true, in_reclaim: true, ..Default::default() }
}

/// kswapd's page_launder meets a page write() dirtied: `try_to_free_buffers` submits its
/// buffers and fails, the page goes back to inactive_dirty, and kswapd goes on (GFP_KSWAPD has
/// no __GFP_WAIT). With the page under that write, the next visit takes it to
/// `try_to_free_buffers` again (the page itself is not locked), which neither writes nor waits.
#[test]
fn kswapd_submits_a_written_pages_buffers_and_never_waits_on_them() {
    let (mut k, pages) = written(64, true);
    let mut ctx = kswapd();
    assert_eq!(page_launder(&mut k, &mut ctx, KSWAPD, None), LaunderEnd::Done(0));
    let r = &k.reclaim.riel24().stats;
    assert_eq!((r.launder_bh_writes, r.try_to_free_buffers), (1, 1));
    let p = pages[0];
    assert!(k.fr.has(p, pg::WRITEBACK) && !k.fr.has(p, pg::DIRTY));
    assert_eq!(k.fr.lru_list(p) as usize, SLOT_DIRTY);
    assert_eq!(k.ev.get(crate::stats::vmstat::Vm::NrVmscanWrite), 1);
    // The tail is now the next written page; put the one under I/O there again.
    crate::vmscan::riel24::del_page_from_lru(&mut k, p);
    crate::vmscan::riel24::add_dirty(&mut k, p);
    for &q in &pages[1..] {
        crate::vmscan::riel24::del_page_from_lru(&mut k, q);
        crate::vmscan::riel24::add_dirty(&mut k, q);
    }
    assert_eq!(page_launder(&mut k, &mut ctx, KSWAPD, None), LaunderEnd::Done(0));
    let r = &k.reclaim.riel24().stats;
    assert_eq!((r.launder_bh_writes, r.try_to_free_buffers), (1, 2), "met under I/O: no second write");
    assert_eq!(r.launder_bh_waits, 0);
}

/// Without 2.4's buffer dirtying the same page is PG_dirty: page_launder's writepage branch
/// writes it and passes over it while it is written, and `try_to_free_buffers` is not called.
#[test]
fn a_pg_dirty_page_goes_to_writepage_instead() {
    let (mut k, pages) = written(64, false);
    let mut ctx = kswapd();
    assert_eq!(page_launder(&mut k, &mut ctx, KSWAPD, None), LaunderEnd::Done(0));
    let r = &k.reclaim.riel24().stats;
    assert_eq!((r.launder_bh_writes, r.try_to_free_buffers), (0, 0));
    assert!(k.fr.has(pages[0], pg::WRITEBACK));
}

/// A direct reclaimer (`GFP_HIGHUSER`, sync) waits on the buffers it submitted: its pass stops
/// with the write's completion as its wake-up, and its next call goes on with the same
/// do_try_to_free_pages and the same page_launder scan.
#[test]
fn direct_reclaim_sleeps_until_its_buffer_write_ends_then_resumes_its_pass() {
    let (mut k, pages) = written(128, true);
    let mut ctx = Ctx { cpu: 1, task: 2, in_reclaim: true, ..Default::default() };
    assert!(!do_try_to_free_pages(&mut k, &mut ctx, DIRECT));
    assert!(parked(&k, 2));
    let p = pages[0];
    assert!(k.fr.has(p, pg::WRITEBACK));
    let until = ctx.throttle_until;
    assert!(until > ctx.clock() + 10_000, "the write's transfer: {until}");
    let r = &k.reclaim.riel24().stats;
    assert_eq!((r.do_try_to_free_pages, r.page_launder, r.launder_bh_writes, r.launder_bh_waits), (1, 1, 1, 1));
    assert_eq!(k.reclaim.riel24().by_task[2].buffer_waits, 1);
    // Woken: the scan's second page is written and waited on in turn, in the same pass.
    ctx.now = until;
    ctx.sys_ns = 0;
    ctx.throttle_until = 0;
    assert!(!do_try_to_free_pages(&mut k, &mut ctx, DIRECT));
    let r = &k.reclaim.riel24().stats;
    assert_eq!((r.do_try_to_free_pages, r.page_launder, r.launder_bh_writes, r.launder_bh_waits), (1, 1, 2, 2));
    assert!(k.fr.has(pages[1], pg::WRITEBACK));
    // kswapd, on the same pages, never parks.
    let mut ks = kswapd();
    assert!(!do_try_to_free_pages(&mut k, &mut ks, KSWAPD));
    assert!(!parked(&k, 1));
}

/// A page that lost its buffers (page_launder freed them while it was clean) gets them again
/// when write() dirties it (`__block_prepare_write` → `create_empty_buffers`), and its dirt is
/// then the buffers'.
#[test]
fn a_page_written_again_after_losing_its_buffers_gets_them_back() {
    let (mut k, pages) = written(1, true);
    let p = pages[0];
    let mut dd = Ctx { cpu: 1, task: 2, ..Default::default() };
    // As try_to_free_buffers leaves a clean page.
    crate::vmscan::riel24::del_page_from_lru(&mut k, p);
    k.fr.extra[p as usize] = 0;
    k.reclaim.riel24_mut().bh_live -= 1;
    crate::vmscan::riel24::add_dirty(&mut k, p);
    let live = k.reclaim.riel24().bh_live;
    crate::vmscan::page_dirtied_by_write(&mut k, &mut dd, p, true);
    assert_eq!(k.fr.extra[p as usize], BUFFERS | BH_DIRTIED);
    assert_eq!(k.reclaim.riel24().bh_live, live + 1);
    assert_eq!(k.reclaim.riel24().dirty_bufs, 1);
    assert!(busy_buffer_page(&k, p));
}
