//! Unit tests of the 6.8 engine's list mechanics, against sndrzt/linux-6.8 `mm/vmscan.c` and
//! `mm/swap.c`.

use super::*;
use crate::kernel::Ctx;
use crate::machine::MachineConfig;
use crate::memcontrol::{CgroupApi, MemCgroup, MemcgLimits};
use crate::mmzone::Mt;

/// The table's row that runs this engine (chosen by engine, so a renamed or added row changes
/// nothing here).
fn modern_row() -> crate::profiles::Profile {
    crate::profiles::all().into_iter().find(|p| p.engine == crate::profiles::Engine::Modern).expect("a modern row")
}

fn kernel() -> Kernel {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
    Kernel::new(modern_row(), cfg, 1).expect("kernel")
}

/// `n` pages on the LRU of node 0 with the given flags (`pg::ANON` for anon; `pg::ACTIVE` for an
/// active list).
fn pages_on_lru(k: &mut Kernel, n: usize, flags: u32) -> Vec<Pfn> {
    let zid = k.nodes[0].zones[0];
    (0..n)
        .map(|_| {
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
            k.fr.set(p, flags);
            lru_add(k, p);
            p
        })
        .collect()
}

fn sc_at(priority: i32) -> ScanControl {
    ScanControl {
        nr_to_reclaim: SWAP_CLUSTER_MAX,
        priority,
        reclaim_idx: ZoneType::Movable as usize,
        may_writepage: true,
        may_swap: true,
        may_unmap: true,
        ..Default::default()
    }
}

/// 6.8's `shrink_active_list` clears PG_active and sets PG_workingset, and leaves PG_referenced
/// alone (`folio_referenced` no longer clears it since 2.6.34): a page deactivated after an
/// access since its activation goes back to the active list at its next access, not its
/// second. The unmapped file page here stands for a page cache page read with `read()`.
#[test]
fn deactivation_keeps_pg_referenced() {
    let mut k = kernel();
    let mut ctx = Ctx::default();
    let ps = pages_on_lru(&mut k, 8, pg::ACTIVE | pg::REFERENCED);
    let sc = sc_at(DEF_PRIORITY);
    shrink_active_list(&mut k, &mut ctx, Lv::root(0), LRU_ACTIVE_FILE, 8, &sc);
    for &p in &ps {
        assert!(!k.fr.has(p, pg::ACTIVE), "deactivated");
        assert!(k.fr.has(p, pg::WORKINGSET), "PG_workingset set on deactivation");
        assert!(k.fr.has(p, pg::REFERENCED), "PG_referenced survives deactivation");
    }
    let activated = k.ev.get(Vm::Pgactivate);
    mark_page_accessed(&mut k, ps[0]);
    assert!(k.fr.has(ps[0], pg::ACTIVE), "one access reactivates a page deactivated referenced");
    assert_eq!(k.ev.get(Vm::Pgactivate), activated + 1);
}

/// `get_scan_count` under SCAN_FRACT divides rounding down for an online group (and the root):
/// since 5.7 (Gavin Shan, "mm/vmscan: don't round up scan size for online memory cgroup",
/// linux-mm, Feb 2020) only an offline group's lists round up, so that its last pages go. A
/// list's share under one page at a priority is not scanned at that priority.
#[test]
fn fractional_scan_targets_round_down() {
    let mut k = kernel();
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
    pages_on_lru(&mut k, 4096, pg::ANON);
    pages_on_lru(&mut k, 4096, 0);
    // No reclaim cost yet: anon's share is swappiness 60 of 200, file's 140 of 200.
    for (priority, anon, file) in [(12, 0, 0), (11, 0, 1), (10, 1, 2), (9, 2, 5)] {
        let nr = get_scan_count(&k, Lv::root(0), &sc_at(priority));
        let size = 4096u64 >> priority;
        assert_eq!(nr[LRU_INACTIVE_ANON], anon, "anon at priority {priority}: {size} x 60/200");
        assert_eq!(nr[LRU_INACTIVE_FILE], file, "file at priority {priority}: {size} x 140/200");
    }
}

/// 6.8's `prepare_scan_count` calls the file LRU tiny (global reclaim scans anon only) when the
/// node's file pages and free memory are under the high watermarks, anon is not being
/// deactivated, *and* the inactive anon list has pages to scan at this priority.
#[test]
fn file_is_tiny_needs_inactive_anon_at_the_priority() {
    let mut k = kernel();
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
    pages_on_lru(&mut k, 2048, pg::ANON);
    // The rest of memory held outside the LRU: no file pages, nothing free.
    let zid = k.nodes[0].zones[0];
    while k.rmqueue(zid, 0, Mt::Movable).is_some() {}
    for (priority, tiny) in [(12, false), (11, true), (DEF_PRIORITY - 4, true)] {
        let mut sc = sc_at(priority);
        prepare_scan_count(&k, 0, &mut sc);
        assert!(!sc.may_deactivate_anon, "all anon inactive: no deactivation");
        assert_eq!(sc.file_is_tiny, tiny, "2048 inactive anon pages >> {priority}");
    }
    // With anon being deactivated (refaults since the last snapshot) the file LRU is not tiny.
    k.nodes[0].lruvec.refaults[0] += 1;
    let mut sc = sc_at(10);
    prepare_scan_count(&k, 0, &mut sc);
    assert!(sc.may_deactivate_anon);
    assert!(!sc.file_is_tiny);
}

/// `inactive_is_low` and cache-trim mode read the whole lruvec, not the zones a reclaim may
/// take from: a DMA32-only reclaim on a node whose active file pages are in Normal still sees
/// the file lists unbalanced.
#[test]
fn inactive_is_low_reads_the_whole_lruvec() {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma32, 8192), (ZoneType::Normal, 8192)]);
    let mut k = Kernel::new(modern_row(), cfg, 1).expect("kernel");
    let (dma32, normal) = (k.nodes[0].zones[0], k.nodes[0].zones[1]);
    assert_eq!(k.zones[dma32].kind, ZoneType::Dma32);
    for (zid, flags, n) in [(dma32, 0, 1000), (normal, pg::ACTIVE, 3000)] {
        for _ in 0..n {
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
            k.fr.set(p, flags);
            lru_add(&mut k, p);
        }
    }
    let mut sc = sc_at(DEF_PRIORITY);
    sc.reclaim_idx = ZoneType::Dma32 as usize;
    prepare_scan_count(&k, 0, &mut sc);
    assert!(sc.may_deactivate_file, "1,000 inactive against 3,000 active file pages is low");
    assert!(!sc.cache_trim_mode);
}

/// `prepare_scan_count` takes the target's costs once per node cycle (`sc->anon_cost`,
/// `sc->file_cost`): cost noted while the cycle runs moves the next cycle's balance, not this
/// one's.
#[test]
fn scan_balance_uses_the_costs_at_the_start_of_the_cycle() {
    let mut k = kernel();
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
    pages_on_lru(&mut k, 4096, pg::ANON);
    pages_on_lru(&mut k, 4096, 0);
    // File refaults since the last cycle: no cache-trim mode, the balance decides.
    k.nodes[0].lruvec.refaults[1] += 1;
    let mut sc = sc_at(6);
    prepare_scan_count(&k, 0, &mut sc);
    assert!(!sc.cache_trim_mode && !sc.file_is_tiny);
    let before = get_scan_count(&k, Lv::root(0), &sc);
    // Thrashing file pages come back: file reclaim now looks costly.
    for _ in 0..64 {
        lru_note_cost(&mut k, Lv::root(0), true, 1, 0);
    }
    assert_eq!(get_scan_count(&k, Lv::root(0), &sc), before, "same cycle, same balance");
    prepare_scan_count(&k, 0, &mut sc);
    let after = get_scan_count(&k, Lv::root(0), &sc);
    assert!(after[LRU_INACTIVE_ANON] > before[LRU_INACTIVE_ANON], "{after:?} vs {before:?}");
    assert!(after[LRU_INACTIVE_FILE] < before[LRU_INACTIVE_FILE], "{after:?} vs {before:?}");
}

/// `prepare_scan_count` deactivates the active file list when WORKINGSET_ACTIVATE_FILE moved
/// since `snapshot_refaults`; 6.8 reads both through `lruvec_page_state`, i.e. as the last
/// flush left the count. With the ratelimited flush an activation after a flush is news only
/// once the periodic flush has folded it in; with 6.8's flush at every pass, at once.
#[test]
fn refault_news_is_read_as_flushed() {
    for ratelimited in [false, true] {
        let mut k = kernel();
        k.profile.memcg_flush_ratelimited = ratelimited;
        let zones = k.zones.len();
        k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
        let v = Lv { node: 0, g: 1 };
        flush_now(&mut k, 1);
        snapshot_refaults(&mut k, v);
        let mut sc = sc_at(DEF_PRIORITY);
        sc.target = 1;
        prepare_scan_count(&k, 0, &mut sc);
        assert!(!sc.may_deactivate_file, "nothing activated yet (ratelimited: {ratelimited})");
        lv_mut(&mut k, v).refaults[1] += 1;
        flush_now(&mut k, 1);
        prepare_scan_count(&k, 0, &mut sc);
        assert_eq!(sc.may_deactivate_file, !ratelimited, "before the periodic flush (ratelimited: {ratelimited})");
        k.now += crate::workingset::FLUSH_TIME_NS;
        flush_now(&mut k, 1);
        prepare_scan_count(&k, 0, &mut sc);
        assert!(sc.may_deactivate_file, "after the periodic flush (ratelimited: {ratelimited})");
    }
}

/// `shrink_lruvec` ages the active anon list whenever there is swap (`can_age_anon_pages`),
/// even in a reclaim that may not swap (a v1 group at its memory+swap limit scans file only).
#[test]
fn anon_is_aged_by_a_reclaim_that_may_not_swap() {
    let mut k = kernel();
    let mut ctx = Ctx::default();
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
    pages_on_lru(&mut k, 256, pg::ANON | pg::ACTIVE);
    let mut sc = sc_at(DEF_PRIORITY);
    sc.may_swap = false;
    shrink_node(&mut k, &mut ctx, 0, &mut sc);
    assert_eq!(k.ev.get(Vm::PgscanAnon), 0, "no anon scanned for reclaim");
    assert_eq!(k.ev.get(Vm::Pgdeactivate), SWAP_CLUSTER_MAX, "a batch of active anon aged");
}

/// Group 1 ("g") is created and flushed, then 64 inactive file pages are charged to it: what the
/// flush tests below read back as flushed or not.
fn group_gains_64_inactive_file_pages_after_a_flush(k: &mut Kernel) {
    let zones = k.zones.len();
    k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
    flush_now(k, 1);
    charge_inactive_file(k, 64);
}

/// `n` inactive file pages charged to group 1.
fn charge_inactive_file(k: &mut Kernel, n: usize) {
    let zid = k.nodes[0].zones[0];
    for _ in 0..n {
        let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
        k.fr.extra[p as usize] = 1;
        lru_add(k, p);
    }
}

/// A node pass's flush as at the kernel's clock.
fn flush_now(k: &mut Kernel, target: u8) {
    let now = k.now;
    flush_before_scan(k, now, target);
}

/// `prepare_scan_count` flushes the target's memcg statistics at every pass in 6.8
/// (`mem_cgroup_flush_stats(sc->target_mem_cgroup)`); since "memcg: use ratelimited stats flush
/// in the reclaim" (Shakeel Butt, Aug 2024) it calls `mem_cgroup_flush_stats_ratelimited`,
/// which leaves the statistics to the 2 s periodic flush. Here a group's 64 inactive file pages
/// are added after a flush: a pass sees them at once in 6.8's form, and with the field only
/// after the next periodic flush.
#[test]
fn reclaim_flushes_memcg_statistics_unless_ratelimited() {
    for ratelimited in [false, true] {
        let mut k = kernel();
        k.profile.memcg_flush_ratelimited = ratelimited;
        group_gains_64_inactive_file_pages_after_a_flush(&mut k);
        flush_now(&mut k, 1);
        let seen = crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE);
        assert_eq!(seen, if ratelimited { 0 } else { 64 }, "ratelimited: {ratelimited}");
        k.now += crate::workingset::FLUSH_TIME_NS;
        flush_now(&mut k, 1);
        assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 64, "after the periodic flush");
    }
}

/// A process reading `memory.stat` (profile `memcg_stat_poll_ms`) flushes the statistics at
/// its period, between the periodic flushes: `memcg1_stat_format` calls
/// `mem_cgroup_flush_stats(memcg)` (Yosry Ahmed, "mm: memcg: make stats flushing threshold
/// per-memcg", linux-mm, 2023). `vmlab real` polls its group so every 20 ms.
#[test]
fn a_memory_stat_reader_flushes_at_its_period() {
    for poll_ms in [0, 20] {
        let mut k = kernel();
        k.profile.memcg_flush_ratelimited = true;
        k.profile.memcg_stat_poll_ms = poll_ms;
        group_gains_64_inactive_file_pages_after_a_flush(&mut k);
        k.now = 19_000_000;
        flush_now(&mut k, 1);
        assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 0, "before the read (poll {poll_ms})");
        k.now = 20_000_000;
        flush_now(&mut k, 1);
        let seen = crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE);
        assert_eq!(seen, if poll_ms > 0 { 64 } else { 0 }, "at the read (poll {poll_ms})");
    }
}

/// The reader's loop works between its polls (profile `memcg_stat_poll_work_us`): with 250 µs
/// it reads every 20.25 ms, so its 11th read is at 222.75 ms, not at 220 ms — a workload
/// whose passes repeat every ~220 ms meets it at a phase that moves from pass to pass.
#[test]
fn a_memory_stat_reader_reads_after_its_poll_and_its_work() {
    for work_us in [0, 250] {
        let mut k = kernel();
        k.profile.memcg_flush_ratelimited = true;
        k.profile.memcg_stat_poll_ms = 20;
        k.profile.memcg_stat_poll_work_us = work_us;
        group_gains_64_inactive_file_pages_after_a_flush(&mut k);
        // The 10th read either way (200-220 ms, 202.5-222.75 ms).
        k.now = 210_000_000;
        flush_now(&mut k, 1);
        assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 64, "210 ms (work {work_us} µs)");
        charge_inactive_file(&mut k, 32);
        k.now = 220_100_000;
        flush_now(&mut k, 1);
        let seen = crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE);
        assert_eq!(seen, if work_us == 0 { 96 } else { 64 }, "220.1 ms (work {work_us} µs)");
        k.now = 222_800_000;
        flush_now(&mut k, 1);
        assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 96, "222.8 ms (work {work_us} µs)");
    }
}

/// The `memory.stat` reader is another task, on its own clock, so its flush can fall inside one
/// long limit reclaim (on this host 8 of 9 priority-2 dives of heap-fileset 384 MiB had one:
/// tracefs `memcg_flush_stats`, docs/notes/history/real-2026-11-28b.md, hf31). A node pass reads
/// the reclaimer's clock: at 25 ms, in a quantum begun at 10 ms, it is in a new 20 ms period and
/// flushes; a refault test at 21 ms (a quantum begun in that period) does not flush again, so it
/// reads the lists as that pass found them, until the next period.
#[test]
fn a_memory_stat_flush_falls_at_the_reclaimers_clock() {
    let mut k = kernel();
    k.profile.memcg_flush_ratelimited = true;
    k.profile.memcg_stat_poll_ms = 20;
    group_gains_64_inactive_file_pages_after_a_flush(&mut k);
    k.now = 10_000_000;
    flush_before_scan(&mut k, 25_000_000, 1);
    assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 64, "flushed at the pass's 25 ms");
    charge_inactive_file(&mut k, 32);
    assert!(!crate::workingset::periodic_flush(&mut k, 21_000_000), "21 ms: that period is flushed");
    assert!(!crate::workingset::periodic_flush(&mut k, 12_000_000), "an earlier clock never flushes");
    assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 64, "still as the pass found them");
    assert!(crate::workingset::periodic_flush(&mut k, 40_000_000), "the next period flushes");
    assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE), 96);
}

/// A v1 group `g` (index 1) holding `n` clean page-cache pages, all on its active file list,
/// added after a flush: its statistics as last flushed show empty lists. With the ratelimited
/// flush nothing refreshes them during a reclaim at time 0.
fn group_with_unflushed_active_file(n: u64) -> (Kernel, Ctx) {
    let mut k = kernel();
    let mut ctx = Ctx::default();
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.profile.memcg_flush_ratelimited = true;
    let zones = k.zones.len();
    k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
    flush_now(&mut k, 1);
    let file = k.file_create("f", n * 4096, 0, false);
    let zid = k.nodes[0].zones[0];
    for i in 0..n {
        let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
        k.fr.extra[p as usize] = 1;
        k.fr.set(p, pg::ACTIVE | pg::UPTODATE);
        k.add_to_page_cache(&mut ctx, file, i, p);
    }
    k.memcg.groups[1].usage = n;
    (k, ctx)
}

/// `do_try_to_free_pages`: a round that left an active list alone (`sc->skipped_deactivate`)
/// and reclaimed nothing is retried from `DEF_PRIORITY` with both lists deactivated
/// (`sc->force_deactivate`) before reclaim gives up (mm/vmscan.c of a 6.11-era tree,
/// AOSC-Tracking/ubuntu-kernel-next-linux; the same in 6.8 as far as the 6.x copies read show).
/// Here the flushed statistics say the file lists are empty, so nothing calls for deactivation,
/// and the only reclaimable pages are active.
#[test]
fn a_round_that_skipped_deactivation_is_retried_with_it() {
    let (mut k, mut ctx) = group_with_unflushed_active_file(4096);
    let mut sc = sc_at(DEF_PRIORITY);
    sc.target = 1;
    prepare_scan_count(&k, 0, &mut sc);
    assert!(!sc.may_deactivate_file && !sc.cache_trim_mode, "the estimate sees no file pages");
    let reclaimed = try_to_free_mem_cgroup_pages(&mut k, &mut ctx, 1, SWAP_CLUSTER_MAX, true);
    assert!(reclaimed > 0, "the forced round deactivates and reclaims");
    assert!(k.ev.get(Vm::Pgdeactivate) >= reclaimed);
}

/// Cache-trim mode reads the inactive file list through `lruvec_page_state`, as the last flush
/// left it: a group whose inactive file pages were taken since still counts as having plenty,
/// and reclaims file only.
#[test]
fn cache_trim_mode_reads_the_flushed_inactive_file_list() {
    let mut k = kernel();
    k.profile.memcg_flush_ratelimited = true;
    let zones = k.zones.len();
    k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
    let zid = k.nodes[0].zones[0];
    let ps: Vec<Pfn> = (0..1024)
        .map(|_| {
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
            k.fr.extra[p as usize] = 1;
            lru_add(&mut k, p);
            p
        })
        .collect();
    flush_now(&mut k, 1);
    let v = Lv { node: 0, g: 1 };
    for &p in &ps {
        del_page_from_lru(&mut k, p);
    }
    assert_eq!(lru_size(&k, v, LRU_INACTIVE_FILE, usize::MAX), 0, "the list is empty now");
    let mut sc = sc_at(DEF_PRIORITY - 4);
    sc.target = 1;
    flush_now(&mut k, 1);
    prepare_scan_count(&k, 0, &mut sc);
    assert!(!sc.may_deactivate_file, "1,024 inactive against no active page, as flushed");
    assert!(sc.cache_trim_mode, "1,024 pages as last flushed >> 8");
}

/// `folio_mark_accessed` of an inactive, referenced folio: on the LRU, `lru_activate` moves it
/// and counts PGACTIVATE for the node and for its group (`count_memcg_events`, 6.x
/// `mm/swap.c`); off the LRU, `__lru_cache_activate_folio` only marks it active and counts
/// nothing.
#[test]
fn mark_accessed_activation_counts_on_the_lru_only_and_in_the_group() {
    let mut k = kernel();
    let zones = k.zones.len();
    k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
    let zid = k.nodes[0].zones[0];
    let on = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
    k.fr.extra[on as usize] = 1;
    lru_add(&mut k, on);
    mark_page_accessed(&mut k, on);
    mark_page_accessed(&mut k, on);
    assert!(k.fr.has(on, pg::ACTIVE));
    assert_eq!(k.ev.get(Vm::Pgactivate), 1, "the node counts the activation");
    assert_eq!(k.memcg.groups[1].ev.get(Vm::Pgactivate), 1, "so does the folio's group");
    let off = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
    k.fr.extra[off as usize] = 1;
    mark_page_accessed(&mut k, off);
    mark_page_accessed(&mut k, off);
    assert!(k.fr.has(off, pg::ACTIVE), "marked active, to go to the active list when added");
    assert_eq!(k.ev.get(Vm::Pgactivate), 1, "not counted off the LRU");
    assert_eq!(k.memcg.groups[1].ev.get(Vm::Pgactivate), 1);
}

/// A file folio of `order` on node 0's inactive file list with `flags`.
fn file_folio_on_lru(k: &mut Kernel, order: u32, flags: u32) -> Pfn {
    let zid = k.nodes[0].zones[0];
    let p = k.rmqueue(zid, order, Mt::Movable).expect("a free block");
    k.fr.set_folio(p, order);
    k.fr.set(p, flags);
    lru_add(k, p);
    p
}

/// 6.x `shrink_folio_list` leaves a dirty file folio met by a reclaimer other than kswapd for
/// the flusher with `node_stat_mod_folio(folio, NR_VMSCAN_IMMEDIATE, nr_pages)`: a large folio
/// counts its pages, as PGACTIVATE does for it (`activate_locked`, `nr_pages`).
#[test]
fn immediate_reclaim_counts_a_dirty_folio_by_its_pages() {
    let mut k = kernel();
    let mut ctx = Ctx::default();
    let p = file_folio_on_lru(&mut k, 2, pg::DIRTY);
    let mut sc = sc_at(DEF_PRIORITY);
    shrink_inactive_list(&mut k, &mut ctx, Lv::root(0), LRU_INACTIVE_FILE, SWAP_CLUSTER_MAX, &mut sc);
    assert!(k.fr.has(p, pg::RECLAIM) && k.fr.has(p, pg::ACTIVE), "marked for immediate reclaim and activated");
    assert_eq!(k.ev.get(Vm::Pgactivate), 4, "activate_locked counts nr_pages");
    assert_eq!(k.ev.get(Vm::NrVmscanImmediateReclaim), 4, "so does NR_VMSCAN_IMMEDIATE");
}

/// 6.x `lru_move_tail` (from `folio_rotate_reclaimable` at the end of a marked folio's write)
/// moves it to the inactive tail, active or not, and counts `PGROTATED` by `folio_nr_pages`.
#[test]
fn rotation_counts_a_folio_by_its_pages() {
    let mut k = kernel();
    let p = file_folio_on_lru(&mut k, 2, pg::ACTIVE);
    crate::vmscan::rotate_reclaimable_page(&mut k, p);
    assert!(!k.fr.has(p, pg::ACTIVE), "to the inactive list");
    assert_eq!(k.fr.lru_list(p) as usize, LRU_INACTIVE_FILE);
    assert_eq!(k.ev.get(Vm::Pgrotated), 4);
}

/// A `memory.stat` reader is another task: its flush folds the lists in as they stand when it
/// runs, and when that is in the middle of a reclaimer's pass it sees the pass half done (on
/// this host a heap-fileset 384 MiB dive's priority-3 pass deactivates ~43 k file pages in
/// ~4 ms, and a 20 ms poll lands anywhere in it: docs/notes/history/real-2026-11-28b.md, hf32).
/// Here a pass deactivates 4,096 active file pages, 32 at a time at 320 µs a batch, from 0 ms
/// to ~41 ms: the polls at 20 and 40 ms flush the lists between two batches, not as the pass
/// began (flushed at 0 ms) or ended.
#[test]
fn a_memory_stat_flush_during_a_pass_sees_the_pass_half_done() {
    let (mut k, mut ctx) = group_with_unflushed_active_file(4096);
    k.profile.memcg_stat_poll_ms = 20;
    k.cost.lru_scan = 10_000;
    assert!(crate::workingset::periodic_flush(&mut k, 0));
    assert_eq!(crate::workingset::lru_state(&k, 0, 1, LRU_ACTIVE_FILE), 4096, "flushed at 0 ms");
    let mut sc = sc_at(0);
    sc.target = 1;
    sc.may_deactivate_file = true;
    shrink_lruvec(&mut k, &mut ctx, Lv { node: 0, g: 1 }, &mut sc);
    assert!(ctx.clock() > 40_000_000, "the pass ran past the 40 ms poll: {} ns", ctx.clock());
    let v = Lv { node: 0, g: 1 };
    assert_eq!(lru_size(&k, v, LRU_INACTIVE_FILE, usize::MAX), 4096, "the pass deactivated every page");
    let inactive = crate::workingset::lru_state(&k, 0, 1, LRU_INACTIVE_FILE);
    let active = crate::workingset::lru_state(&k, 0, 1, LRU_ACTIVE_FILE);
    assert_eq!(inactive + active, 4096);
    assert!(inactive > 0 && active > 0, "flushed mid-pass: {inactive} inactive, {active} active");
    assert_eq!(inactive % SWAP_CLUSTER_MAX, 0, "between two batches");
}
