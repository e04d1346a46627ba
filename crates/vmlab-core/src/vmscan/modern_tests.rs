//! Unit tests of the 6.8 engine's list mechanics, against sndrzt/linux-6.8 `mm/vmscan.c` and
//! `mm/swap.c`.

use super::*;
use crate::kernel::Ctx;
use crate::machine::MachineConfig;
use crate::mmzone::Mt;

fn kernel() -> Kernel {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
    Kernel::new(crate::profiles::find("linux-6.8").expect("profile"), cfg, 1).expect("kernel")
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
