//! Filesystem metadata in slab caches (`fs/dcache.c`, `fs/inode.c`, 2.6.36): every file a
//! program creates gets an inode and a dentry, objects of two SLUB caches with
//! `SLAB_RECLAIM_ACCOUNT`. They are freed when the file is deleted, or by the slab shrinkers
//! that reclaim calls in proportion to its LRU scanning (`shrink_slab`). A slab page goes back
//! to the buddy allocator only when all its objects are gone, and new slabs are
//! `__GFP_RECLAIMABLE` allocations that fall back into movable pageblocks when the reclaimable
//! ones are full: kernel pages end up scattered between page-cache pages, as on a file server
//! that has run for days.
//!
//! Enabled by a scenario's `[fs]` table (object sizes of the filesystem's caches); without it
//! files cost no metadata, as before.

use std::collections::VecDeque;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, NIL};
use crate::mmzone::Mt;
use crate::slub::KmemCache;
use crate::stats::vmstat::Vm;

/// `DEFAULT_SEEKS`, `SHRINK_BATCH`, `sysctl_vfs_cache_pressure`.
const DEFAULT_SEEKS: u64 = 2;
const SHRINK_BATCH: u64 = 128;
const VFS_CACHE_PRESSURE: u64 = 100;
const SWAP_CLUSTER_MAX: u64 = 32;

pub struct Vfs {
    pub dentry_cache: KmemCache,
    pub inode_cache: KmemCache,
    /// `sb->s_dentry_lru`: every cached dentry of a closed file, oldest first. Entries of
    /// deleted files are stale and skipped.
    d_lru: VecDeque<u32>,
    /// `inode_unused`: inodes whose dentry was pruned, oldest first, as (file, stamp); an entry
    /// whose stamp no longer matches the file's was taken back into use by a lookup.
    i_unused: VecDeque<(u32, u32)>,
    stamp: u32,
    pub nr_dentry: u64,
    pub nr_inodes_unused: u64,
    /// `shrinker->nr`: scan work carried over, dcache then icache (registration order).
    shrinker_nr: [u64; 2],
    pub pruned_dentries: u64,
    pub pruned_inodes: u64,
    pub reclaimed_slab: u64,
}

impl Vfs {
    pub fn new(dentry_size: u64, inode_size: u64, nr_cpus: u64, t: crate::slub::SlubTunables) -> Vfs {
        Vfs {
            dentry_cache: KmemCache::with_tunables("dentry", dentry_size, nr_cpus, Mt::Reclaimable, t),
            inode_cache: KmemCache::with_tunables("inode_cache", inode_size, nr_cpus, Mt::Reclaimable, t),
            d_lru: VecDeque::new(),
            i_unused: VecDeque::new(),
            stamp: 0,
            nr_dentry: 0,
            nr_inodes_unused: 0,
            shrinker_nr: [0; 2],
            pruned_dentries: 0,
            pruned_inodes: 0,
            reclaimed_slab: 0,
        }
    }
}

/// Run `f` with the Vfs taken out of the kernel (the caches allocate through `k`).
fn with_vfs<R>(k: &mut Kernel, f: impl FnOnce(&mut Kernel, &mut Vfs) -> R) -> Option<R> {
    let mut v = k.vfs.take()?;
    let r = f(k, &mut v);
    k.vfs = Some(v);
    Some(r)
}

/// A path lookup of `file` (open, creat): `iget` and `d_alloc` when the objects were pruned.
/// A cached dentry is marked referenced again (`DCACHE_REFERENCED`: it survives one pass of the
/// LRU) unless the profile's dcache is the lazy-LRU one (2.6.x to 2.6.37), whose `dput` marks
/// only a dentry it puts on the LRU, and the path walk leaves a cached one there.
pub fn lookup(k: &mut Kernel, ctx: &mut Ctx, file: u32) {
    with_vfs(k, |k, v| {
        let fi = file as usize;
        if k.files[fi].unlinked {
            return;
        }
        if k.files[fi].inode == NIL {
            if let Some(p) = v.inode_cache.alloc(k, ctx) {
                k.files[fi].inode = p;
            }
        } else if k.files[fi].dentry == NIL {
            // The inode was on inode_unused: the lookup takes it back (its entry goes stale).
            v.stamp = v.stamp.wrapping_add(1);
            k.files[fi].i_stamp = v.stamp;
            v.nr_inodes_unused -= 1;
        }
        if k.files[fi].dentry == NIL {
            if let Some(p) = v.dentry_cache.alloc(k, ctx) {
                k.files[fi].dentry = p;
                // The open's `dput` puts the new dentry on the unused LRU, marked
                // DCACHE_REFERENCED: it survives the pruner's first pass over it.
                k.files[fi].d_referenced = true;
                v.nr_dentry += 1;
                v.d_lru.push_back(file);
            } else if k.files[fi].inode != NIL {
                // `d_alloc` failed: the lookup fails and its `iput` leaves the inode, new or
                // taken back, on inode_unused, which is where the next lookup expects it.
                v.stamp = v.stamp.wrapping_add(1);
                k.files[fi].i_stamp = v.stamp;
                v.i_unused.push_back((file, v.stamp));
                v.nr_inodes_unused += 1;
            }
        } else if !k.profile.dcache_lazy_lru {
            k.files[fi].d_referenced = true;
        }
    });
}

/// The file's last link is gone: `d_delete` + `iput` free both objects.
pub fn unlink(k: &mut Kernel, ctx: &mut Ctx, file: u32) {
    with_vfs(k, |k, v| {
        let fi = file as usize;
        let (d, i) = (k.files[fi].dentry, k.files[fi].inode);
        if d != NIL {
            v.dentry_cache.free(k, ctx, d);
            v.nr_dentry -= 1;
        } else if i != NIL {
            v.nr_inodes_unused -= 1;
        }
        if i != NIL {
            v.inode_cache.free(k, ctx, i);
        }
        k.files[fi].dentry = NIL;
        k.files[fi].inode = NIL;
        if v.d_lru.len() as u64 > 2 * v.nr_dentry + 4096 {
            let files = &k.files;
            v.d_lru.retain(|&f| !files[f as usize].unlinked && files[f as usize].dentry != NIL);
        }
    });
}

/// `shrink_slab` (2.6.36) after reclaim scanned `scanned` LRU pages out of `lru_pages`: each
/// shrinker scans `4·scanned/seeks · objects/(lru_pages+1)` objects, in batches of 128, the
/// remainder carried to the next call. Returns the slab pages freed (`reclaimed_slab`).
/// `fs`: the caller's allocation may enter the filesystem (__GFP_FS); the dcache and icache
/// shrinkers refuse otherwise.
pub fn shrink_slab(k: &mut Kernel, ctx: &mut Ctx, scanned: u64, lru_pages: u64, fs: bool) -> u64 {
    if !fs {
        return 0;
    }
    // A call that scanned no LRU page still ages the caches as if it had scanned a cluster:
    // kswapd calls this for every zone up to end_zone, also those it skipped as having "way too
    // many" free pages, so the slab is aged on every pass.
    let scanned = if scanned == 0 { SWAP_CLUSTER_MAX } else { scanned };
    with_vfs(k, |k, v| {
        let before = v.dentry_cache.pages + v.inode_cache.pages;
        for s in 0..2 {
            let unused = if s == 0 { v.nr_dentry } else { v.nr_inodes_unused };
            let max_pass = unused / 100 * VFS_CACHE_PRESSURE;
            let delta = (4 * scanned / DEFAULT_SEEKS) * max_pass / (lru_pages + 1);
            let mut total = (v.shrinker_nr[s] + delta).min(2 * max_pass);
            while total >= SHRINK_BATCH {
                k.ev.add(Vm::SlabsScanned, SHRINK_BATCH);
                if s == 0 {
                    prune_dcache(k, ctx, v, SHRINK_BATCH);
                } else {
                    prune_icache(k, ctx, v, SHRINK_BATCH);
                }
                total -= SHRINK_BATCH;
            }
            v.shrinker_nr[s] = total;
        }
        let freed = before - (v.dentry_cache.pages + v.inode_cache.pages);
        v.reclaimed_slab += freed;
        freed
    })
    .unwrap_or(0)
}

/// `prune_dcache`: free up to `n` unreferenced dentries from the LRU's old end; a referenced
/// one loses the flag and goes back to the young end without counting. Each pruned dentry's
/// inode joins `inode_unused`.
fn prune_dcache(k: &mut Kernel, ctx: &mut Ctx, v: &mut Vfs, n: u64) {
    let mut left = n;
    let mut budget = v.d_lru.len();
    while left > 0 && budget > 0 {
        budget -= 1;
        let Some(file) = v.d_lru.pop_front() else { break };
        let fi = file as usize;
        let d = k.files[fi].dentry;
        if d == NIL || k.files[fi].unlinked {
            continue;
        }
        if std::mem::take(&mut k.files[fi].d_referenced) {
            v.d_lru.push_back(file);
            continue;
        }
        v.dentry_cache.free(k, ctx, d);
        k.files[fi].dentry = NIL;
        v.nr_dentry -= 1;
        v.pruned_dentries += 1;
        left -= 1;
        if k.files[fi].inode != NIL {
            v.stamp = v.stamp.wrapping_add(1);
            k.files[fi].i_stamp = v.stamp;
            v.i_unused.push_back((file, v.stamp));
            v.nr_inodes_unused += 1;
        }
    }
}

/// `prune_icache`: free up to `n` unused inodes from the old end. An inode with page cache
/// first has its clean, unmapped, idle pages invalidated (`invalidate_mapping_pages`, counted
/// as inode steal); if pages remain it stays, moved to the young end.
fn prune_icache(k: &mut Kernel, ctx: &mut Ctx, v: &mut Vfs, n: u64) {
    for _ in 0..n {
        let Some((file, stamp)) = v.i_unused.pop_front() else { break };
        let fi = file as usize;
        let i = k.files[fi].inode;
        if i == NIL || k.files[fi].unlinked || k.files[fi].i_stamp != stamp || k.files[fi].dentry != NIL {
            continue;
        }
        if k.files[fi].nrpages > 0 {
            let reap = invalidate_mapping_pages(k, ctx, file);
            k.ev.add(if ctx.is_kswapd { Vm::KswapdInodesteal } else { Vm::Pginodesteal }, reap);
            if k.files[fi].nrpages > 0 {
                v.i_unused.push_back((file, stamp));
                continue;
            }
        }
        v.inode_cache.free(k, ctx, i);
        k.files[fi].inode = NIL;
        v.nr_inodes_unused -= 1;
        v.pruned_inodes += 1;
    }
    // Stale entries (deleted files, inodes looked up again) would otherwise accumulate.
    if v.i_unused.len() as u64 > 2 * v.nr_inodes_unused + 4096 {
        let files = &k.files;
        v.i_unused.retain(|&(f, s)| {
            let f = &files[f as usize];
            !f.unlinked && f.inode != NIL && f.dentry == NIL && f.i_stamp == s
        });
    }
}

/// `invalidate_mapping_pages`: drop a file's clean, unmapped pages that nobody is using.
fn invalidate_mapping_pages(k: &mut Kernel, ctx: &mut Ctx, file: u32) -> u64 {
    let mut n = 0;
    for idx in 0..k.files[file as usize].pages.len() {
        let p = k.files[file as usize].pages[idx];
        if p == NIL {
            continue;
        }
        let fl = k.fr.flags[p as usize];
        if fl & pg::LRU == 0 || fl & (pg::DIRTY | pg::WRITEBACK | pg::LOCKED) != 0 || k.fr.mapcount[p as usize] != 0 {
            continue;
        }
        crate::vmscan::del_page_from_lru(k, p);
        k.remove_from_page_cache(p, 0);
        k.free_pages(ctx, p, 0);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 4, &[(ZoneType::Dma32, 16384), (ZoneType::Normal, 8192)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        k.vfs = Some(Box::new(Vfs::new(192, 800, 4, crate::slub::SlubTunables::default())));
        k
    }

    fn create(k: &mut Kernel, ctx: &mut Ctx, n: usize) -> Vec<u32> {
        (0..n)
            .map(|i| {
                let f = k.file_create(&format!("f{i}"), 4096, 0, true);
                lookup(k, ctx, f);
                f
            })
            .collect()
    }

    #[test]
    fn slub_orders_follow_calculate_order() {
        // 4 CPUs: 16 objects a slab wanted. ext3 inodes need order 2, dentries fit order 0;
        // 16 CPUs want 24 inodes: order 3.
        assert_eq!(crate::slub::calculate_order(800, 4), 2);
        assert_eq!(crate::slub::calculate_order(192, 4), 0);
        assert_eq!(crate::slub::calculate_order(800, 16), 3);
        assert_eq!(crate::slub::calculate_order(4096, 4), 3);
    }

    #[test]
    fn a_slab_is_freed_only_with_its_last_object() {
        let mut k = kernel();
        let mut ctx = Ctx::default();
        let files = create(&mut k, &mut ctx, 40); // two full inode slabs of 20 (order 2)
        let v = k.vfs.as_ref().unwrap();
        assert_eq!(v.inode_cache.pages, 8);
        assert_eq!(v.dentry_cache.pages, 2);
        let slab0 = k.files[files[0] as usize].inode;
        // Delete 19 of the first slab's 20 files: it stays, pinned by the last inode.
        for &f in &files[..19] {
            k.file_unlink(&mut ctx, f);
        }
        assert_eq!(k.files[files[19] as usize].inode, slab0);
        assert_eq!(k.vfs.as_ref().unwrap().inode_cache.pages, 8);
        let slab_before = k.g.slab;
        k.file_unlink(&mut ctx, files[19]);
        assert_eq!(k.vfs.as_ref().unwrap().inode_cache.pages, 4, "the emptied slab goes back to the buddy allocator");
        assert_eq!(k.g.slab, slab_before - 4);
        k.check_frames().expect("consistent frames");
    }

    #[test]
    fn shrink_slab_scans_in_proportion_to_lru_scanning() {
        let mut k = kernel();
        let mut ctx = Ctx { is_kswapd: true, ..Default::default() };
        create(&mut k, &mut ctx, 2000);
        // delta = 4·scanned/2 · (2000/100·100) / (lru_pages+1) = 200·2000/1000 = 400 → three
        // batches of 128 dentries now, 16 carried over. The new dentries are all referenced:
        // the first batch walks the whole LRU clearing the flag, the next two prune.
        shrink_slab(&mut k, &mut ctx, 100, 999, true);
        let v = k.vfs.as_ref().unwrap();
        assert_eq!(v.pruned_dentries, 256);
        assert_eq!(v.nr_inodes_unused, 256);
        assert_eq!(v.shrinker_nr[0], 16);
        // Without __GFP_FS the shrinkers do nothing.
        shrink_slab(&mut k, &mut ctx, 100, 999, false);
        assert_eq!(k.vfs.as_ref().unwrap().pruned_dentries, 256);
        // Pruned objects come back on the next lookup.
        let f = k.file_ids["f0"];
        assert_eq!(k.files[f as usize].dentry, NIL);
        lookup(&mut k, &mut ctx, f);
        assert_ne!(k.files[f as usize].dentry, NIL);
        k.check_frames().expect("consistent frames");
    }
    /// 2.6.36 `shrink_slab` starts with `if (scanned == 0) scanned = SWAP_CLUSTER_MAX;`, and
    /// `balance_pgdat` calls it for zones it did not shrink (their `sc.nr_scanned` is 0).
    #[test]
    fn a_call_that_scanned_nothing_counts_a_cluster() {
        let mut k = kernel();
        let mut ctx = Ctx { is_kswapd: true, ..Default::default() };
        create(&mut k, &mut ctx, 2000);
        // delta = 4·32/2 · 2000 / (63+1) = 2000: fifteen batches of 128, 80 carried over; the
        // first batch only clears the new dentries' DCACHE_REFERENCED.
        shrink_slab(&mut k, &mut ctx, 0, 63, true);
        let v = k.vfs.as_ref().unwrap();
        assert_eq!(v.pruned_dentries, 14 * 128);
        assert_eq!(v.shrinker_nr[0], 80);
        // With 32 pages scanned the same call does exactly the same work.
        let mut k2 = kernel();
        create(&mut k2, &mut ctx, 2000);
        shrink_slab(&mut k2, &mut ctx, 32, 63, true);
        assert_eq!(k2.vfs.as_ref().unwrap().pruned_dentries, 14 * 128);
        // Without __GFP_FS nothing, scanned or not.
        let mut k3 = kernel();
        create(&mut k3, &mut ctx, 2000);
        shrink_slab(&mut k3, &mut ctx, 0, 63, false);
        assert_eq!(k3.vfs.as_ref().unwrap().pruned_dentries, 0);
        k.check_frames().expect("consistent frames");
    }

    /// 2.6.36's dput marks DCACHE_REFERENCED only when it puts a dentry on the unused LRU, and
    /// the path walk leaves a cached dentry there: looking it up again gives no new second
    /// chance. 2.6.38's dput marks it on every final put.
    #[test]
    fn a_lookup_of_a_cached_dentry_re_references_it_only_without_the_lazy_lru() {
        for (lazy, pruned) in [(true, true), (false, false)] {
            let mut k = kernel();
            k.profile.dcache_lazy_lru = lazy;
            let mut ctx = Ctx::default();
            let files = create(&mut k, &mut ctx, 21);
            // A pass over the LRU clears every new dentry's flag without pruning any.
            with_vfs(&mut k, |k, v| prune_dcache(k, &mut ctx, v, 1));
            assert_eq!(k.vfs.as_ref().unwrap().pruned_dentries, 0);
            lookup(&mut k, &mut ctx, files[0]);
            with_vfs(&mut k, |k, v| prune_dcache(k, &mut ctx, v, 1));
            assert_eq!(k.files[files[0] as usize].dentry == NIL, pruned, "lazy LRU {lazy}");
            k.check_frames().expect("consistent frames");
        }
    }

    #[test]
    fn a_failed_d_alloc_leaves_the_inode_on_inode_unused() {
        let mut k = kernel();
        let mut ctx = Ctx::default();
        let files = create(&mut k, &mut ctx, 21); // one order-0 dentry slab of 21, full
        let f = files[0];
        // The first pass clears every new dentry's DCACHE_REFERENCED; the second prunes the oldest.
        with_vfs(&mut k, |k, v| prune_dcache(k, &mut ctx, v, 1));
        assert_ne!(k.files[f as usize].dentry, NIL);
        with_vfs(&mut k, |k, v| prune_dcache(k, &mut ctx, v, 1));
        assert_eq!(k.files[f as usize].dentry, NIL);
        assert_eq!(k.vfs.as_ref().unwrap().nr_inodes_unused, 1);
        // Another file takes the freed dentry; then no page is left for a new dentry slab.
        let g = k.file_create("g", 4096, 0, true);
        lookup(&mut k, &mut ctx, g);
        let mut held = Vec::new();
        while let Ok(p) = k.alloc_pages(&mut ctx, crate::page_alloc::Gfp::atomic(), 0) {
            held.push(p);
        }
        // The lookup takes f's inode off inode_unused, d_alloc fails, and iput puts it back:
        // a failed lookup, however often repeated, must leave the count as it was.
        for _ in 0..3 {
            lookup(&mut k, &mut ctx, f);
            assert_eq!(k.files[f as usize].dentry, NIL);
            assert_eq!(k.vfs.as_ref().unwrap().nr_inodes_unused, 1);
        }
        for p in held {
            k.free_pages(&mut ctx, p, 0);
        }
        lookup(&mut k, &mut ctx, f);
        assert_ne!(k.files[f as usize].dentry, NIL);
        assert_eq!(k.vfs.as_ref().unwrap().nr_inodes_unused, 0);
        // Its stale inode_unused entries are skipped by the pruner.
        with_vfs(&mut k, |k, v| prune_icache(k, &mut ctx, v, 8));
        assert_ne!(k.files[f as usize].inode, NIL);
        k.check_frames().expect("consistent frames");
    }
}
