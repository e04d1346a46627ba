//! Page-table quicklists (`mm/quicklist.c`, 2.6.22–5.3): freed page-table pages are cached per
//! CPU instead of going back to the buddy allocator; `check_pgt_cache` trims each CPU's list to
//! a bound computed from the node's free memory — per CPU (2.6.26) or divided by the node's
//! CPUs (2.6.27).

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::ZoneType;
use crate::profiles::QuicklistRule;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

const FRACTION_OF_NODE_MEM: u64 = 16;
/// `check_pgt_cache` → `quicklist_trim(0, NULL, 25, 16)`.
pub const MIN_PAGES: u64 = 25;
pub const MAX_FREE: u64 = 16;

pub fn quicklist_alloc(k: &mut Kernel, ctx: &mut Ctx) -> Option<Pfn> {
    if k.profile.quicklist == QuicklistRule::None {
        return None;
    }
    let cpu = ctx.cpu as usize;
    let p = k.quicklists.get_mut(cpu)?.pop_head(&mut k.fr)?;
    k.fr.clear(p, pg::QUICKLIST);
    k.fr.set(p, pg::PGTABLE);
    k.g.quicklist -= 1;
    k.g.pagetable += 1;
    k.ev.inc(Vm::PgtableQuicklistHit);
    Some(p)
}

/// `quicklist_free`: the page goes on the freeing CPU's list whatever node it came from. (The V5
/// proposal of 2.6.21-mm freed other nodes' pages straight to the buddy allocator; the code
/// merged in 2.6.22 and kept until 5.3 has no such check, so a CPU can hoard pages of a node
/// whose free memory its bound never looks at — seed 003's program does exactly that.)
pub fn quicklist_free(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    if k.profile.quicklist == QuicklistRule::None {
        return false;
    }
    let cpu = ctx.cpu as usize;
    if cpu >= k.quicklists.len() {
        return false;
    }
    k.fr.clear(p, pg::PGTABLE);
    k.fr.set(p, pg::QUICKLIST);
    k.g.pagetable -= 1;
    k.g.quicklist += 1;
    k.quicklists[cpu].push_head(&mut k.fr, p);
    true
}

/// `max_pages(min_pages)`.
pub fn max_pages(k: &Kernel, cpu: u32, min_pages: u64) -> u64 {
    let node = k.cfg.node_of_cpu(cpu);
    let node_free: u64 = k.nodes[node]
        .zones
        .iter()
        .filter(|&&z| matches!(k.zones[z].kind, ZoneType::Dma | ZoneType::Dma32 | ZoneType::Normal))
        .map(|&z| k.zones[z].free_pages)
        .sum();
    let mut max = node_free / FRACTION_OF_NODE_MEM;
    if k.profile.quicklist == QuicklistRule::NodeFree16PerCpu {
        max /= k.nodes[node].cpus.len().max(1) as u64;
    }
    max.max(min_pages)
}

/// `check_pgt_cache` on the context's CPU.
pub fn check_pgt_cache(k: &mut Kernel, ctx: &mut Ctx) {
    if k.profile.quicklist == QuicklistRule::None {
        return;
    }
    let cpu = ctx.cpu as usize;
    if cpu >= k.quicklists.len() || k.quicklists[cpu].len <= MIN_PAGES {
        return;
    }
    let max = max_pages(k, ctx.cpu, MIN_PAGES);
    let to_free = k.quicklists[cpu].len.saturating_sub(max).min(MAX_FREE);
    for _ in 0..to_free {
        let Some(p) = k.quicklists[cpu].pop_head(&mut k.fr) else { break };
        k.fr.clear(p, pg::QUICKLIST);
        k.g.quicklist -= 1;
        k.free_pages(ctx, p, 0);
    }
    k.charge(ctx, KFunc::QuicklistTrim, to_free * k.cost.page_free);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;

    fn kernel(quicklist: QuicklistRule, nodes: u32, cpus: u32) -> Kernel {
        let mem = 1u64 << 30;
        let cfg = MachineConfig {
            memory_bytes: mem,
            cpus,
            nodes,
            arch: "x86_64".into(),
            cpu_mhz: 3000,
            reserved_bytes: 0,
            reserved_low_bytes: 0,
            zones: MachineConfig::layout(mem, nodes, "x86_64").unwrap(),
        };
        Kernel::new(crate::profiles::Profile { quicklist, ..crate::profiles::default_row() }, cfg, 1).unwrap()
    }

    fn node_free(k: &Kernel, node: usize) -> u64 {
        k.nodes[node].zones.iter().map(|&z| k.zones[z].free_pages).sum()
    }

    #[test]
    fn max_pages_per_cpu_and_divided_by_the_node_cpus() {
        let k = kernel(QuicklistRule::NodeFree16, 2, 8);
        assert_eq!(max_pages(&k, 5, MIN_PAGES), node_free(&k, 1) / 16);
        let k = kernel(QuicklistRule::NodeFree16PerCpu, 2, 8);
        assert_eq!(max_pages(&k, 5, MIN_PAGES), node_free(&k, 1) / 16 / 4);
        assert_eq!(max_pages(&k, 0, 1 << 30), 1 << 30, "never below min_pages");
    }

    #[test]
    fn a_page_of_another_node_stays_on_the_freeing_cpu_and_trims_16_at_a_time() {
        let mut k = kernel(QuicklistRule::NodeFree16, 2, 4);
        let mut on0 = Ctx { cpu: 0, node: 0, ..Default::default() };
        let pages: Vec<Pfn> = (0..60).map(|_| k.pgtable_alloc(&mut on0).unwrap()).collect();
        assert!(pages.iter().all(|&p| k.node_of(p) == 0));
        // CPU 3 is on node 1: it keeps node-0 pages all the same.
        let mut on3 = Ctx { cpu: 3, node: 1, ..Default::default() };
        for &p in &pages {
            k.pgtable_free(&mut on3, p);
        }
        assert_eq!(k.quicklists[3].len, 60);
        assert_eq!(k.g.quicklist, 60);
        // Below the bound nothing is trimmed; above it, at most 16 pages a call.
        check_pgt_cache(&mut k, &mut on3);
        assert_eq!(k.quicklists[3].len, 60);
        // A node with no free memory: the bound falls to min_pages.
        k.zones.iter_mut().for_each(|z| z.free_pages = 0);
        check_pgt_cache(&mut k, &mut on3);
        assert_eq!(k.quicklists[3].len, 44);
        check_pgt_cache(&mut k, &mut on3);
        check_pgt_cache(&mut k, &mut on3);
        assert_eq!(k.quicklists[3].len, MIN_PAGES, "min_pages stay");
        // The next page table on CPU 3 comes from its list.
        let p = k.pgtable_alloc(&mut on3).unwrap();
        assert_eq!(k.node_of(p), 0);
        assert_eq!(k.quicklists[3].len, MIN_PAGES - 1);
    }
}
