//! Refault detection (`mm/workingset.c`): an evicted page leaves a shadow holding the lruvec's
//! eviction clock; on refault, the distance tells whether the page would have stayed resident
//! had the active list been smaller — if so it is activated at once.

use crate::kernel::Kernel;
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::stats::vmstat::Vm;

/// Shadow value for an evicted page (never 0, which means "no shadow").
pub fn eviction(k: &mut Kernel, node: usize) -> u32 {
    age_nonresident(k, node);
    (k.nodes[node].lruvec.nonresident_age as u32).max(1)
}

/// `workingset_age_nonresident`: the clock runs on evictions and on activations, since an
/// activation, like an eviction, shrinks the room left for the inactive list.
fn age_nonresident(k: &mut Kernel, node: usize) {
    k.nodes[node].lruvec.nonresident_age += 1;
}

/// `workingset_activation` (from `folio_mark_accessed` when it activates a page) and
/// `move_folios_to_lru` (reclaim putting a page back active).
pub fn activation(k: &mut Kernel, p: Pfn) {
    if k.profile.workingset {
        let node = k.node_of(p);
        age_nonresident(k, node);
    }
}

fn refault(k: &mut Kernel, p: Pfn, shadow: u32, file: bool) {
    if !k.profile.workingset || shadow == 0 {
        return;
    }
    let node = k.node_of(p);
    let lv = &k.nodes[node].lruvec;
    let distance = (lv.nonresident_age as u32).wrapping_sub(shadow) as u64;
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
    k.ev.inc(if file { Vm::WorkingsetRefaultFile } else { Vm::WorkingsetRefaultAnon });
    k.nodes[node].lruvec.refaults[file as usize] += 1;
    if distance <= ws {
        k.fr.set(p, pg::ACTIVE | pg::WORKINGSET);
        age_nonresident(k, node);
        k.ev.inc(if file { Vm::WorkingsetActivateFile } else { Vm::WorkingsetActivateAnon });
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
