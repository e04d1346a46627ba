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

fn lruvec(k: &Kernel, node: usize, g: u8) -> &Lruvec {
    if g == ROOT {
        &k.nodes[node].lruvec
    } else {
        &k.memcg.groups[g as usize].lruvec[node]
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
    let now = lruvec(k, node, eg).nonresident_age as u32;
    let distance = (now.wrapping_sub(eviction) & mask) as u64;
    let was_workingset = shadow & WORKINGSET_BIT != 0;
    // Could the page have stayed resident had the lists it competes with given way? Not its
    // own inactive list, which it was evicted from: file pages compete with the active file
    // list and, with swap, all of anon; anon pages with all of file and, with swap, the active
    // anon list. The sizes are the evicting lruvec's, with its descendants'.
    let mut ws = lru_pages(k, node, eg, LRU_ACTIVE_FILE);
    if !file {
        ws += lru_pages(k, node, eg, LRU_INACTIVE_FILE);
    }
    if crate::memcontrol::nr_swap_pages(k, eg) > 0 {
        ws += lru_pages(k, node, eg, LRU_ACTIVE_ANON);
        if file {
            ws += lru_pages(k, node, eg, LRU_INACTIVE_ANON);
        }
    }
    // Counted in the group the page is charged to now, which may not be the evicting one.
    let g = crate::memcontrol::page_memcg(k, p);
    let nr = k.fr.folio_nr(p);
    let refault_item = if file { Vm::WorkingsetRefaultFile } else { Vm::WorkingsetRefaultAnon };
    k.ev.add(refault_item, nr);
    crate::memcontrol::count_event(k, g, refault_item, nr);
    if distance > ws {
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
