//! Refault detection (`mm/workingset.c`): an evicted page leaves a shadow holding the lruvec's
//! eviction clock; on refault, the distance tells whether the page would have stayed resident
//! had the active list been smaller — if so it is activated at once.
//!
//! With memory cgroups the clock is the evicting group's lruvec's (each eviction or activation
//! ages the group's lruvec and every ancestor's, the node's last), and the shadow carries the
//! group's id beside the clock, as the kernel's packs `memcgid` into the entry.

use crate::kernel::Kernel;
use crate::memcontrol::ROOT;
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{Lruvec, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::stats::vmstat::Vm;

/// With groups, the shadow's low bits hold the clock and the top byte the group.
const MEMCG_SHIFT: u32 = 24;
const AGE_MASK: u32 = (1 << MEMCG_SHIFT) - 1;

fn lruvec(k: &Kernel, node: usize, g: u8) -> &Lruvec {
    if g == ROOT {
        &k.nodes[node].lruvec
    } else {
        &k.memcg.groups[g as usize].lruvec[node]
    }
}

/// Shadow value for an evicted page (never 0, which means "no shadow").
pub fn eviction(k: &mut Kernel, p: Pfn) -> u32 {
    let node = k.node_of(p);
    let g = crate::memcontrol::page_memcg(k, p);
    age_nonresident(k, node, g);
    let age = lruvec(k, node, g).nonresident_age as u32;
    if k.memcg.active() {
        ((age & AGE_MASK) | ((g as u32) << MEMCG_SHIFT)).max(1)
    } else {
        age.max(1)
    }
}

/// `workingset_age_nonresident`: the clock runs on evictions and on activations, since an
/// activation, like an eviction, shrinks the room left for the inactive list.
fn age_nonresident(k: &mut Kernel, node: usize, g: u8) {
    let mut c = g;
    while c != ROOT {
        k.memcg.groups[c as usize].lruvec[node].nonresident_age += 1;
        c = k.memcg.groups[c as usize].parent;
    }
    k.nodes[node].lruvec.nonresident_age += 1;
}

/// `workingset_activation` (from `folio_mark_accessed` when it activates a page) and
/// `move_folios_to_lru` (reclaim putting a page back active).
pub fn activation(k: &mut Kernel, p: Pfn) {
    if k.profile.workingset {
        let node = k.node_of(p);
        let g = crate::memcontrol::page_memcg(k, p);
        age_nonresident(k, node, g);
    }
}

fn refault(k: &mut Kernel, p: Pfn, shadow: u32, file: bool) {
    if !k.profile.workingset || shadow == 0 {
        return;
    }
    let node = k.node_of(p);
    let (eg, distance) = if k.memcg.active() {
        let eg = (shadow >> MEMCG_SHIFT) as u8;
        let eg = if (eg as usize) < k.memcg.groups.len() { eg } else { ROOT };
        let age = lruvec(k, node, eg).nonresident_age as u32;
        (eg, (age.wrapping_sub(shadow) & AGE_MASK) as u64)
    } else {
        (ROOT, (k.nodes[node].lruvec.nonresident_age as u32).wrapping_sub(shadow) as u64)
    };
    let lv = lruvec(k, node, eg);
    // workingset_test_recent (6.x): could the page have stayed resident had the lists it
    // competes with given way? Not its own inactive list, which it was evicted from: file pages
    // compete with the active file list and, with swap, all of anon; anon pages with all of file
    // and, with swap, the active anon list.
    let mut ws = lv.size(LRU_ACTIVE_FILE);
    if !file {
        ws += lv.size(LRU_INACTIVE_FILE);
    }
    if crate::swap_state::free_swap_pages(k) > 0 {
        ws += lv.size(LRU_ACTIVE_ANON);
        if file {
            ws += lv.size(LRU_INACTIVE_ANON);
        }
    }
    let g = crate::memcontrol::page_memcg(k, p);
    let refault_item = if file { Vm::WorkingsetRefaultFile } else { Vm::WorkingsetRefaultAnon };
    k.ev.inc(refault_item);
    crate::memcontrol::count_event(k, g, refault_item, 1);
    k.nodes[node].lruvec.refaults[file as usize] += 1;
    let mut c = g;
    while c != ROOT {
        k.memcg.groups[c as usize].lruvec[node].refaults[file as usize] += 1;
        c = k.memcg.groups[c as usize].parent;
    }
    if distance <= ws {
        k.fr.set(p, pg::ACTIVE | pg::WORKINGSET);
        k.psi_workingset_read = true;
        age_nonresident(k, node, g);
        let activate_item = if file { Vm::WorkingsetActivateFile } else { Vm::WorkingsetActivateAnon };
        k.ev.inc(activate_item);
        crate::memcontrol::count_event(k, g, activate_item, 1);
        let lv = &mut k.nodes[node].lruvec;
        if file {
            lv.file_cost += 1;
        } else {
            lv.anon_cost += 1;
        }
    }
}

pub fn refault_file(k: &mut Kernel, p: Pfn, file: u32, idx: u64) {
    let sh = k.files[file as usize].take_shadow(idx);
    refault(k, p, sh, true);
}

pub fn refault_anon(k: &mut Kernel, p: Pfn, slot: u32) {
    let sh = match k.swap.as_mut() {
        Some(sw) => std::mem::take(&mut sw.shadow[slot as usize]),
        None => 0,
    };
    refault(k, p, sh, false);
}
