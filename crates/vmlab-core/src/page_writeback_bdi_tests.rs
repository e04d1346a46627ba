//! Per-bdi flushers and the machine's other writers (`machine.foreign_dirty`): 6.x's
//! `wakeup_flusher_threads` starts a `WB_start_all` work on every backing device with dirty
//! data (fs/fs-writeback.c `__wakeup_flusher_threads_bdi`, `wb_start_writeback`), each written
//! by its own `wb_workfn`; every folio that ends writeback on the node counts for the reclaimers
//! throttled on it (mm/filemap.c `folio_end_writeback` → mm/vmscan.c `__acct_reclaim_writeback`),
//! whichever disk it was on.

use super::*;
use crate::machine::MachineConfig;
use crate::mmzone::ZoneType;
use crate::vmscan::throttle::{reclaim_throttle, ThrottleReason};

/// A machine whose profile runs a flusher per disk (the first row with `per_bdi_flusher`), with
/// two fast disks and a file on each: `out` (the workload's, disk 0) and `other` (disk 1).
fn two_disks() -> (Kernel, u32, u32) {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 16)]);
    let row = crate::profiles::all().into_iter().find(|p| p.per_bdi_flusher).expect("a row with per-bdi flushers");
    let mut k = Kernel::new(row, cfg, 1).expect("kernel");
    for _ in 0..2 {
        k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
    }
    k.disk_wb = vec![0, 1];
    k.wbs.push(Wb::default());
    let out = k.file_create("out", 1 << 30, 0, false);
    let other = k.file_create("other", 4096 * 2000, 1, false);
    (k, out, other)
}

/// Dirty the first `n` pages of `file` as a writer does (its own pages, not foreign ones).
fn write(k: &mut Kernel, file: u32, n: u64) {
    let mut ctx = Ctx::default();
    for idx in 0..n {
        let p = k.alloc_pages(&mut ctx, crate::page_alloc::Gfp::highuser_movable(), 0).expect("a free page");
        k.fr.set(p, pg::UPTODATE);
        k.add_to_page_cache(&mut ctx, file, idx, p);
        set_page_dirty(k, &ctx, p);
    }
}

/// Reclaim's wakeup starts both disks' works, and each flusher writes only its own disk's
/// inodes; a disk with nothing dirty gets no work.
#[test]
fn the_wakeup_starts_every_disk_with_dirty_pages() {
    let (mut k, out, other) = two_disks();
    k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
    k.disk_wb.push(2);
    k.wbs.push(Wb::default());
    write(&mut k, out, 3000);
    dirty_foreign(&mut k, other).expect("fits");
    assert_eq!((k.wbs[0].nr_dirty, k.wbs[1].nr_dirty, k.g.dirty), (3000, 2000, 5000));
    assert_eq!(k.ev.get(Vm::NrDirtied), 3000, "the foreign pages were dirtied before the run");
    wakeup_flusher_threads(&mut k);
    assert!(k.wbs[0].start_all && k.wbs[1].start_all, "both disks with dirty pages");
    assert!(!k.wbs[2].start_all, "the clean disk gets no work");
    let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
    flusher_pass(&mut k, &mut ctx, 1);
    assert_eq!(k.files[other as usize].nr_dirty, 0, "disk 1's flusher wrote its inode");
    assert_eq!(k.files[out as usize].nr_dirty, 3000, "and nothing of disk 0's");
    assert_eq!(k.disks[1].wb.nr_writeback, 2000);
    flusher_pass(&mut k, &mut ctx, 0);
    assert!(k.files[out as usize].nr_dirty < 3000, "disk 0's flusher writes its own");
    assert_eq!(k.disks[0].wb.nr_writeback + k.files[out as usize].nr_dirty, 3000);
}

/// A writer throttled on writeback is woken by the other disk's completions, before any page
/// of its own file has been written; with nothing dirty on the other disk it is not.
#[test]
fn a_throttled_reclaimer_is_woken_by_another_disks_completions() {
    let woken = |foreign: bool| {
        let (mut k, out, other) = two_disks();
        write(&mut k, out, 3000);
        if foreign {
            dirty_foreign(&mut k, other).expect("fits");
        }
        wakeup_flusher_threads(&mut k);
        // Disk 1's flusher runs; disk 0's has not yet (held, or not scheduled).
        let mut fl = Ctx { is_flusher: true, ..Ctx::default() };
        flusher_pass(&mut k, &mut fl, 1);
        let mut writer = Ctx { task: 7, ..Ctx::default() };
        reclaim_throttle(&mut k, &mut writer, 0, ThrottleReason::Writeback);
        let mut q = std::mem::take(&mut k.io_queue);
        q.sort_by_key(|&(t, _)| t);
        for (t, d) in q {
            k.now = t;
            k.io_complete(&mut fl, d);
        }
        assert_eq!(k.files[out as usize].nr_dirty, 3000, "none of the writer's pages went out");
        k.throttle_wakeups.clone()
    };
    assert_eq!(woken(true), vec![7], "the other disk's 2,000 completions wake it");
    assert!(woken(false).is_empty(), "nothing else was written: it sleeps on");
}
