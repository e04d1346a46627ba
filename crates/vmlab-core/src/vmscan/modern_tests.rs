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
