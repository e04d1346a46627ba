//! Refault detection (`mm/workingset.c`): an evicted page leaves a shadow holding the reclaim
//! target's eviction clock and whether the page was part of the workingset (PG_workingset: it
//! had been on an active list); on refault, the distance tells whether the page would have
//! stayed resident had the lists it competes with been smaller — if so it is activated at once,
//! and if it was workingset before it is restored as such (counted, and charged to the reclaim
//! cost of its type).
//!
//! With memory cgroups the clock is the reclaim target's lruvec's (`workingset_eviction` takes
//! `target_memcg`: the limited group for limit reclaim, the root for global reclaim; each
//! eviction or activation ages that lruvec and every ancestor's, the node's last), and the
//! shadow carries the target's id beside the clock, as the kernel packs `memcgid` into it.

use crate::kernel::Kernel;
use crate::memcontrol::ROOT;
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{Lruvec, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::stats::vmstat::Vm;
use crate::trace::Tracepoint;

/// The lists a `Tracepoint::WorkingsetRefault` reports, in its `lists` order.
const TRACED_LISTS: [usize; 4] = [LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE];

/// The shadow's low bit is PG_workingset at eviction (`pack_shadow`'s `WORKINGSET_SHIFT`); the
/// clock is above it, and with groups the top byte holds the group.
const WORKINGSET_BIT: u32 = 1;
const MEMCG_SHIFT: u32 = 24;
const AGE_BITS_MEMCG: u32 = MEMCG_SHIFT - 1;
const AGE_BITS: u32 = 31;

fn age_mask(k: &Kernel) -> u32 {
    let bits = if k.memcg.active() { AGE_BITS_MEMCG } else { AGE_BITS };
    (1u32 << bits) - 1
}

/// Node `node`'s lruvec of group `g` (the node's own for the root).
pub(crate) fn lruvec(k: &Kernel, node: usize, g: u8) -> &Lruvec {
    if g == ROOT {
        &k.nodes[node].lruvec
    } else {
        &k.memcg.groups[g as usize].lruvec[node]
    }
}

pub(crate) fn lruvec_mut(k: &mut Kernel, node: usize, g: u8) -> &mut Lruvec {
    if g == ROOT {
        &mut k.nodes[node].lruvec
    } else {
        &mut k.memcg.groups[g as usize].lruvec[node]
    }
}

/// `FLUSH_TIME`: the memcg statistics worker flushes the whole tree every 2 s.
pub const FLUSH_TIME_NS: u64 = 2_000_000_000;

/// `mem_cgroup_flush_stats(g)`: bring the memcg statistics of `g`'s subtree up to date. 6.8
/// keeps them per CPU and folds them in only at a flush (rstat; `lruvec_page_state` reads the
/// folded values), so what the refault test and `inactive_is_low` see is the lists as they were
/// at the last flush. Reclaim flushes the target's subtree at the start of each node's pass
/// (`prepare_scan_count`); 6.8 skips that when fewer than 64 page updates per CPU are pending
/// ("mm: memcg: make stats flushing threshold per-memcg", Yosry Ahmed, 6.8), which any pass
/// that isolates a batch exceeds, so vmlab always flushes there.
pub fn flush_stats(k: &mut Kernel, g: u8) {
    if !k.memcg.active() {
        return;
    }
    let mut walk = std::mem::take(&mut k.memcg_walk);
    k.memcg.subtree(g, &mut walk);
    for node in 0..k.nodes.len() {
        for &c in &walk {
            let sizes = [0, 1, 2, 3].map(|l| lru_pages(k, node, c, l));
            let lv = lruvec_mut(k, node, c);
            lv.flushed_lru = sizes;
            lv.flushed_refaults = lv.refaults;
        }
    }
    k.memcg_walk = walk;
}

/// The periodic flusher (`flush_memcg_stats_dwork`, every `FLUSH_TIME`), run when the clock has
/// entered a new period since the last one. It flushes at the first read in a period rather
/// than at the period's start: the lists change only while something reclaims or faults, and
/// each reclaim pass flushes anyway. A `memory.stat` reader (profile `memcg_stat_poll_ms`)
/// flushes in the same way at its own period. True when it flushed.
///
/// `now` is the caller's clock. Both flushers are other tasks, on their own clocks, so a flush
/// can fall between the priority passes of one long limit reclaim: a reclaimer reads its own
/// clock at each node pass, and a flush taken there is not taken again by a task whose quantum
/// began earlier in the same period (it would move the statistics back in time). On this host
/// 8 of 9 priority-2 dives of heap-fileset 384 MiB had a `memory.stat` flush inside them
/// (tracefs `memcg_flush_stats`; docs/notes/history/real-2026-11-28b.md, hf31).
pub fn periodic_flush(k: &mut Kernel, now: u64) -> bool {
    if !k.memcg.active() {
        return false;
    }
    // A reader of `memory.stat` flushes as often as it reads (above the update threshold, which
    // a reclaiming group passes within a poll). It reads the groups it watches; vmlab flushes
    // the tree, the same for a machine whose pages are all in the watched group.
    // No reader without a poll timeout, whatever its work would be.
    let poll = match k.profile.memcg_stat_poll_ms {
        0 => 0,
        ms => ms * 1_000_000 + k.profile.memcg_stat_poll_work_us * 1_000,
    };
    let period = now / FLUSH_TIME_NS;
    let later = |p: u64, last: u64| last == u64::MAX || p > last;
    let new_period = later(period, k.memcg.flushed_period);
    let polled = now.checked_div(poll).filter(|&p| later(p, k.memcg.polled_period));
    if !new_period && polled.is_none() {
        return false;
    }
    if new_period {
        k.memcg.flushed_period = period;
    }
    if let Some(p) = polled {
        k.memcg.polled_period = p;
    }
    flush_stats(k, ROOT);
    k.trace_at_clock(now, crate::trace::Tracepoint::MemcgFlushStats { memcg: ROOT, force: new_period });
    true
}

/// `lruvec_page_state` of list `l`: with groups, as of the last flush; without, the node's
/// live counters (vmlab's machines without groups stand for a kernel without memcg).
pub fn lru_state(k: &Kernel, node: usize, g: u8, l: usize) -> u64 {
    if k.memcg.active() {
        lruvec(k, node, g).flushed_lru[l]
    } else {
        lru_pages(k, node, g, l)
    }
}

/// WORKINGSET_ACTIVATE (anon, file) of `lv` as `lruvec_page_state` reads it: with groups, as the
/// last flush left it, so the count and the snapshot reclaim compares it with stay alike.
pub fn activations_state(k: &Kernel, lv: &Lruvec) -> [u64; 2] {
    if k.memcg.active() {
        lv.flushed_refaults
    } else {
        lv.refaults
    }
}

/// `lruvec_page_state` of list `l`: the group's pages and its descendants' (the root's: the
/// whole node), as the kernel's hierarchical memcg statistics count them.
fn lru_pages(k: &Kernel, node: usize, g: u8, l: usize) -> u64 {
    let zones = &k.nodes[node].zones;
    if g == ROOT {
        return zones.iter().map(|&z| k.zones[z].lru_pages[l]).sum();
    }
    let gs = &k.memcg.groups;
    (1..gs.len())
        .filter(|&c| k.memcg.is_descendant(c as u8, g))
        .map(|c| zones.iter().map(|&z| gs[c].lru_zone[z][l]).sum::<u64>())
        .sum()
}

/// `workingset_eviction`: the shadow for page `p`, evicted by reclaim on behalf of `target`
/// (never 0, which means "no shadow"). The clock is read before this eviction ages it; the
/// stored field is one more, so that it is never 0.
pub fn eviction(k: &mut Kernel, p: Pfn, target: u8) -> u32 {
    let node = k.node_of(p);
    let target = if k.memcg.active() { target } else { ROOT };
    let age = lruvec(k, node, target).nonresident_age as u32;
    let nr = k.fr.folio_nr(p);
    age_nonresident(k, node, target, nr);
    let clock = (age.wrapping_add(1) & age_mask(k)).max(1);
    let ws = if k.fr.has(p, pg::WORKINGSET) { WORKINGSET_BIT } else { 0 };
    let group = if k.memcg.active() { (target as u32) << MEMCG_SHIFT } else { 0 };
    group | (clock << 1) | ws
}

/// `workingset_age_nonresident`: the clock runs on evictions and on activations, since an
/// activation, like an eviction, shrinks the room left for the inactive list; a folio moves
/// it by its pages.
fn age_nonresident(k: &mut Kernel, node: usize, g: u8, nr: u64) {
    let mut c = g;
    while c != ROOT {
        k.memcg.groups[c as usize].lruvec[node].nonresident_age += nr;
        c = k.memcg.groups[c as usize].parent;
    }
    k.nodes[node].lruvec.nonresident_age += nr;
}

/// `workingset_activation` (from `folio_mark_accessed` when it activates a page) and
/// `move_folios_to_lru` (reclaim putting a page back active).
pub fn activation(k: &mut Kernel, p: Pfn) {
    if k.profile.workingset {
        let node = k.node_of(p);
        let g = crate::memcontrol::page_memcg(k, p);
        let nr = k.fr.folio_nr(p);
        age_nonresident(k, node, g, nr);
    }
}

/// `workingset_refault` with `workingset_test_recent`, for the folio at `p` (its counters move
/// by the folio's pages, its clock distance is the one shadow's).
fn refault(k: &mut Kernel, p: Pfn, shadow: u32, file: bool) {
    if !k.profile.workingset || shadow == 0 {
        return;
    }
    let node = k.node_of(p);
    let mask = age_mask(k);
    let eg = if k.memcg.active() { (shadow >> MEMCG_SHIFT) as u8 } else { ROOT };
    // A group removed since the eviction: the kernel finds no memcg for the id and gives up.
    let eg = if (eg as usize) < k.memcg.groups.len() { eg } else { ROOT };
    let eviction = ((shadow >> 1) & mask).wrapping_sub(1);
    let age = lruvec(k, node, eg).nonresident_age as u32;
    let distance = (age.wrapping_sub(eviction) & mask) as u64;
    let was_workingset = shadow & WORKINGSET_BIT != 0;
    let now = k.now;
    periodic_flush(k, now);
    // Could the page have stayed resident had the lists it competes with given way? Not its
    // own inactive list, which it was evicted from: file pages compete with the active file
    // list and, with swap, all of anon; anon pages with all of file and, with swap, the active
    // anon list. The sizes are the evicting lruvec's, with its descendants', as the last flush
    // of the memcg statistics left them (`workingset_test_recent` reads `lruvec_page_state`;
    // `workingset_refault`'s own flush is rate-limited to a periodic flusher late by a cycle).
    let mut ws = lru_state(k, node, eg, LRU_ACTIVE_FILE);
    if !file {
        ws += lru_state(k, node, eg, LRU_INACTIVE_FILE);
    }
    if crate::memcontrol::nr_swap_pages(k, eg) > 0 {
        ws += lru_state(k, node, eg, LRU_ACTIVE_ANON);
        if file {
            ws += lru_state(k, node, eg, LRU_INACTIVE_ANON);
        }
    }
    // Counted in the group the page is charged to now, which may not be the evicting one.
    let g = crate::memcontrol::page_memcg(k, p);
    let nr = k.fr.folio_nr(p);
    let refault_item = if file { Vm::WorkingsetRefaultFile } else { Vm::WorkingsetRefaultAnon };
    k.ev.add(refault_item, nr);
    crate::memcontrol::count_event(k, g, refault_item, nr);
    let recent = distance <= ws;
    if k.traces(crate::trace::kind::WORKINGSET_REFAULT) {
        let lists = TRACED_LISTS.map(|l| lru_state(k, node, eg, l));
        let restored = recent && was_workingset;
        let ev = Tracepoint::WorkingsetRefault {
            file,
            nr,
            distance,
            workingset_size: ws,
            activated: recent,
            restored,
            lists,
        };
        k.trace(ev);
    }
    if !recent {
        return;
    }
    k.fr.set(p, pg::ACTIVE);
    age_nonresident(k, node, g, nr);
    let activate_item = if file { Vm::WorkingsetActivateFile } else { Vm::WorkingsetActivateAnon };
    k.ev.add(activate_item, nr);
    crate::memcontrol::count_event(k, g, activate_item, nr);
    // WORKINGSET_ACTIVATE is what reclaim compares with its last snapshot to decide whether a
    // new workingset is forming (prepare_scan_count): hierarchical, so every ancestor counts.
    k.nodes[node].lruvec.refaults[file as usize] += nr;
    let mut c = g;
    while c != ROOT {
        k.memcg.groups[c as usize].lruvec[node].refaults[file as usize] += nr;
        c = k.memcg.groups[c as usize].parent;
    }
    if was_workingset {
        // A page that was workingset before its eviction: thrashing, not a new page. Only this
        // stalls on memory in PSI (the read runs under psi_memstall_enter for PG_workingset),
        // and only this makes the type's reclaim look costly (lru_note_cost_refault).
        k.fr.set(p, pg::WORKINGSET);
        k.psi_workingset_read = true;
        crate::vmscan::lru_note_cost_refault(k, p, file);
        let restore_item = if file { Vm::WorkingsetRestoreFile } else { Vm::WorkingsetRestoreAnon };
        k.ev.add(restore_item, nr);
        crate::memcontrol::count_event(k, g, restore_item, nr);
    }
}

pub fn refault_file(k: &mut Kernel, p: Pfn, file: u32, idx: u64) {
    let sh = k.files[file as usize].take_shadow(idx);
    refault(k, p, sh, true);
}

/// A large folio entering the cache: its range may hold several shadows (of smaller folios
/// evicted before); `__filemap_add_folio`'s conflict walk keeps the last, and all go.
pub fn refault_file_folio(k: &mut Kernel, p: Pfn, file: u32, idx: u64, nr: u64) {
    let mut sh = 0;
    for i in idx..idx + nr {
        let s = k.files[file as usize].take_shadow(i);
        if s != 0 {
            sh = s;
        }
    }
    refault(k, p, sh, true);
}

pub fn refault_anon(k: &mut Kernel, p: Pfn, slot: u32) {
    let sh = match k.swap.as_mut() {
        Some(sw) => std::mem::take(&mut sw.shadow[slot as usize]),
        None => 0,
    };
    refault(k, p, sh, false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::memcontrol::{CgroupApi, MemCgroup, MemcgLimits};
    use crate::mmzone::{Mt, ZoneType};

    /// A kernel of the first row with memory cgroups and refault detection, and one group.
    fn kernel_with_group() -> Kernel {
        let row = crate::profiles::all().into_iter().find(|p| p.memcg && p.workingset).expect("a memcg row");
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
        let mut k = Kernel::new(row, cfg, 1).expect("kernel");
        let zones = k.zones.len();
        k.memcg.groups.push(MemCgroup::new("g", ROOT, CgroupApi::V1, MemcgLimits::default(), 1, zones));
        k
    }

    /// `n` file pages charged to group 1, on its active list.
    fn active_file_pages(k: &mut Kernel, n: usize) -> Vec<Pfn> {
        let zid = k.nodes[0].zones[0];
        (0..n)
            .map(|_| {
                let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
                k.fr.extra[p as usize] = 1;
                k.fr.set(p, pg::ACTIVE);
                crate::vmscan::lru_add(k, p);
                p
            })
            .collect()
    }

    /// 6.8's `workingset_test_recent` compares the refault distance with `lruvec_page_state` of
    /// the evicting group, i.e. the lists as the last rstat flush (`mem_cgroup_flush_stats`,
    /// from reclaim's `prepare_scan_count`) left them, not as reclaim has left them since. Here
    /// 512 active file pages are counted at a flush and then deactivated: a refault at a
    /// distance of 300 is still activated, and after the next flush it is not.
    #[test]
    fn refault_test_reads_the_lists_as_last_flushed() {
        let mut k = kernel_with_group();
        let ps = active_file_pages(&mut k, 512);
        k.memcg.flushed_period = k.now / FLUSH_TIME_NS;
        flush_stats(&mut k, 1);
        assert_eq!(lru_state(&k, 0, 1, LRU_ACTIVE_FILE), 512);
        for &p in &ps {
            crate::vmscan::del_page_from_lru(&mut k, p);
            k.fr.clear(p, pg::ACTIVE);
            crate::vmscan::lru_add(&mut k, p);
        }
        assert_eq!(lru_pages(&k, 0, 1, LRU_ACTIVE_FILE), 0, "the lists themselves are up to date");
        // A page coming back into the cache (not yet on a list) whose shadow is 300 evictions old.
        let refault_at = |k: &mut Kernel| {
            let shadow = eviction(k, ps[0], 1);
            age_nonresident(k, 0, 1, 299);
            let zid = k.nodes[0].zones[0];
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
            k.fr.extra[p as usize] = 1;
            refault(k, p, shadow, true);
            k.fr.has(p, pg::ACTIVE)
        };
        assert!(refault_at(&mut k), "distance 300 within the 512 active pages last flushed");
        flush_stats(&mut k, 1);
        assert!(!refault_at(&mut k), "after a flush the active list is empty: not recent");
        assert_eq!(k.ev.get(Vm::WorkingsetActivateFile), 1);
    }

    /// Keeps the refault tests it is shown.
    struct Tests(Vec<Tracepoint>);

    impl crate::trace::Tracer for Tests {
        fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
            self.0.push(*ev);
        }
        fn wants(&self) -> u32 {
            crate::trace::kind::WORKINGSET_REFAULT
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// The refault tracepoint reports the test as it was made: the distance, the workingset
    /// size and the flushed lists it was summed from (file with swap: active file and both anon
    /// lists), and the outcome; a shadow without PG_workingset activates but does not restore.
    #[test]
    fn the_refault_tracepoint_reports_the_test_as_made() {
        let mut k = kernel_with_group();
        k.attach_tracer(Box::new(Tests(Vec::new())));
        let ps = active_file_pages(&mut k, 512);
        k.memcg.flushed_period = k.now / FLUSH_TIME_NS;
        flush_stats(&mut k, 1);
        let zid = k.nodes[0].zones[0];
        let test = |k: &mut Kernel, shadow: u32| {
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a free page");
            k.fr.extra[p as usize] = 1;
            refault(k, p, shadow, true);
        };
        let shadow = eviction(&mut k, ps[0], 1);
        age_nonresident(&mut k, 0, 1, 299);
        test(&mut k, shadow);
        let far = eviction(&mut k, ps[1], 1);
        age_nonresident(&mut k, 0, 1, 1000);
        test(&mut k, far);
        let seen = &k.tracer::<Tests>().expect("attached").0;
        let swap = crate::memcontrol::nr_swap_pages(&k, 1) > 0;
        let anon = if swap { lru_state(&k, 0, 1, LRU_INACTIVE_ANON) + lru_state(&k, 0, 1, LRU_ACTIVE_ANON) } else { 0 };
        let expect = |distance: u64, activated: bool| Tracepoint::WorkingsetRefault {
            file: true,
            nr: 1,
            distance,
            workingset_size: 512 + anon,
            activated,
            restored: false,
            lists: TRACED_LISTS.map(|l| lru_state(&k, 0, 1, l)),
        };
        assert_eq!(seen.as_slice(), [expect(300, true), expect(1001, false)]);
    }
}
