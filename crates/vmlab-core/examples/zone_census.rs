//! Follow a long run's fragmentation hour by hour: MemFree, each zone's free pages by order, the
//! census of its aligned order-3 blocks (`reproduce::kswapd_high_order::order3_block_census`) and
//! the kswapd counters seed 001 compares (pgscan per zone, pgdeactivate / pgrefill, lumpy
//! passes). The timeline of `vmlab run` shows only totals; this is what the history note's
//! day-long curves were measured with.
//!
//! Slab by zone: each zone's slab pages split into the `[fs]` caches (dentry, inode: reclaimable)
//! and the rest (kmalloc, skbuff_head_cache, task_struct: unmovable), each by the migrate type of
//! the pageblock it sits in, and the reclaimable pages allocated and the fallbacks made in each
//! zone (`mm_page_alloc_extfrag`) since the previous line — to set against the reporter's
//! per-zone `slab_reclaimable`.
//!
//! cargo run --release -p vmlab-core --example zone_census -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]
//! (EVERY_S a multiple of 60: MemFree is also read every minute, and its mean over the window printed.)

mod common;

use vmlab_core::kernel::Kernel;
use vmlab_core::reproduce::kswapd_high_order::{order3_block_census, zone_composition};
use vmlab_core::sim::Sim;
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

/// Where allocations land, per zone (0..8): GFP_HIGHUSER_MOVABLE pages and the page-cache pages
/// among them (`mm_filemap_add_to_page_cache`; the rest are anon), each by what kswapd was doing
/// (not balancing, balancing at order 0, in a run begun at order > 0); GFP_KERNEL and GFP_ATOMIC
/// allocations by order (0, 1, 2, 3+). Cumulative; an observer, so the run is unchanged.
#[derive(Default, Clone)]
struct AllocMix {
    movable: [[u64; 3]; 8],
    file: [[u64; 3]; 8],
    kernel: [[u64; 4]; 8],
    atomic: [[u64; 4]; 8],
    /// MIGRATE_RECLAIMABLE pages allocated; fallbacks by requested type, [all, stole the block].
    recl: [u64; 8],
    extfrag: [[[u64; 2]; 3]; 8],
}

impl Tracer for AllocMix {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let ks = &k.nodes[0].kswapd;
        let phase = match ks.phase {
            vmlab_core::mmzone::KswapdPhase::Balancing => 1 + (ks.bal_order > 0) as usize,
            _ => 0,
        };
        match *ev {
            Tracepoint::MmPageAlloc { zone, order, gfp, migratetype, .. } => {
                let z = zone.min(7);
                if migratetype == vmlab_core::mmzone::Mt::Reclaimable {
                    self.recl[z] += 1 << order;
                }
                let o = (order as usize).min(3);
                match gfp {
                    GfpKind::HighuserMovable => self.movable[z][phase] += 1 << order,
                    GfpKind::Kernel => self.kernel[z][o] += 1,
                    GfpKind::Atomic => self.atomic[z][o] += 1,
                }
            }
            Tracepoint::FilemapAdd { pfn, .. } => self.file[k.zone_of(pfn).min(7)][phase] += 1,
            Tracepoint::MmPageAllocExtfrag { zone, start_mt, stolen, .. } => {
                self.extfrag[zone.min(7)][start_mt as usize][0] += 1;
                self.extfrag[zone.min(7)][start_mt as usize][1] += stolen as u64;
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Slab pages per zone: [dentry, inode, other][pageblock type unmovable/movable/reclaimable],
/// and the dentry and inode objects in each zone. The `[fs]` caches' slabs are found from the
/// files' objects (an object's handle is its slab's head pfn); every other SLAB frame is "other".
fn slab_by_zone(k: &Kernel) -> (Vec<[[u64; 3]; 3]>, Vec<[u64; 2]>) {
    use vmlab_core::mm_types::{pg, NIL};
    let nz = k.zones.len();
    let nfr = k.fr.flags.len();
    let mut owner = vec![0u8; nfr];
    let mut objs = vec![[0u64; 2]; nz];
    for f in &k.files {
        for (c, p) in [(1u8, f.dentry), (2u8, f.inode)] {
            if p != NIL {
                owner[p as usize] = c;
                objs[k.zone_of(p)][c as usize - 1] += 1;
            }
        }
    }
    let mut pages = vec![[[0u64; 3]; 3]; nz];
    let mut p = 0usize;
    while p < nfr {
        if k.fr.flags[p] & pg::SLAB == 0 {
            p += 1;
            continue;
        }
        let (cache, n) = match owner[p] {
            0 => (2, 1),
            c => (c as usize - 1, 1usize << k.fr.aux[p]),
        };
        let z = k.zone_of(p as u32);
        for q in p..p + n {
            pages[z][cache][(k.pageblock_mt[k.pageblock_of(z, q as u32)] as usize).min(2)] += 1;
        }
        p += n;
    }
    (pages, objs)
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("zone_census");
    sim.k.attach_tracer(Box::new(AllocMix::default()));
    // MemFree is read every minute for the window's mean; the census runs every EVERY_S.
    let mut window = common::setup_window(&mut sim, every_s);
    let mut prev = AllocMix::default();
    println!(
        "t_h memfree_pct memfree_window_mean_pct | per zone: file/anon/mlocked/slab+tables/free/other % free o0 o1 o2 o3+pages o3+% blocks free% freeable% pinned1% pinned2-7% pinned8% only-anon/mlock/slab/pgtable/other % free_in_pinned free_pages_by_type(unmov/mov/recl/reserve: o0-2,o3+) pageblocks_by_type(unmov/mov/recl/reserve) | kswapd pgscan per zone (zone order: DMA32 Normal) pgdeact pgrefill o3runs lumpy lowprio o3wakeups o3ends_balanced/fallback o0runs high_wmark_hit_quickly | load: per disk read/written KiB, pgalloc pgfree pgmajfault pgsteal(kswapd+direct) | meminfo MiB: anon(active/inactive) file(active/inactive) unevictable mlocked slab pagetables kernel_stack mapped sock, live user tasks | allocations per zone (DMA32 Normal): movable(file) kswapd asleep/order-0/high-order run, kernel o0/o1/o2/o3+ atomic o0/o1/o2/o3+ | slab per zone: pages dentry/inode/other each (by pageblock unmov/mov/recl), dentries inodes, reclaimable pages allocated and fallbacks unmov/mov/recl(stolen) since the last line; nr_dentry nr_inodes_unused pruned dentries/inodes slabs_scanned inodesteal pswpout"
    );
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        let Some((free, mean)) = window.sample(sim, every_s) else { return };
        let mi = sim.meminfo();
        let mut line = format!("{:.1} {free:.2} {mean:.2} |", sim.s.now as f64 / 3.6e12);
        let mut scan = [0u64; 8];
        let d = sim.k.reclaim.split2636_kswapd(0).cloned().unwrap_or_default();
        for (zid, z) in sim.k.zones.iter().enumerate() {
            if z.present < 8192 {
                continue;
            }
            scan[zid.min(7)] = d.zone_scan_kswapd[zid.min(7)];
            let o3 = common::free_in_orders(z, 3..vmlab_core::mmzone::MAX_ORDER);
            let c = order3_block_census(sim, zid);
            let pct = |x: u64| x as f64 * 100.0 / c.blocks.max(1) as f64;
            let comp = zone_composition(sim, zid).map(|x| format!("{x:.1}")).join("/");
            // /proc/pagetypeinfo in two bands: a movable allocation splits a movable order >= 3
            // block only when no movable block of order 0-2 is free.
            let by_type: Vec<String> = (0..vmlab_core::mmzone::MIGRATE_TYPES)
                .map(|mt| {
                    let band = |r: std::ops::Range<usize>| -> u64 { r.map(|o| z.free_area[o][mt].len << o).sum() };
                    format!("{},{}", band(0..3), band(3..vmlab_core::mmzone::MAX_ORDER))
                })
                .collect();
            let mut blocks_by_type = [0u64; 4];
            let pb = 1u32 << vmlab_core::mmzone::PAGEBLOCK_ORDER;
            for b in (z.phys_start_pfn / pb)..z.phys(z.end_pfn).div_ceil(pb) {
                blocks_by_type[(sim.k.pageblock_mt[b as usize] as usize).min(3)] += 1;
            }
            line += &format!(
                " {} {comp} {} {} {} {} {} {:.1} {} {:.2} {:.2} {:.2} {:.2} {:.2} {:.1}/{:.1}/{:.1}/{:.1}/{:.1} {} {} {}/{}/{}/{} |",
                z.kind.name(),
                z.free_pages,
                z.nr_free[0],
                z.nr_free[1],
                z.nr_free[2],
                o3,
                o3 as f64 * 100.0 / z.free_pages.max(1) as f64,
                c.blocks,
                pct(c.free),
                pct(c.freeable),
                pct(c.pinned_one),
                pct(c.pinned_some),
                pct(c.pinned_all),
                pct(c.pinned_by[0]),
                pct(c.pinned_by[1]),
                pct(c.pinned_by[2]),
                pct(c.pinned_by[3]),
                pct(c.pinned_by[4]),
                c.free_in_pinned,
                by_type.join("/"),
                blocks_by_type[0],
                blocks_by_type[1],
                blocks_by_type[2],
                blocks_by_type[3],
            );
        }
        let zones: Vec<String> = sim
            .k
            .zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.present >= 8192)
            .map(|(zid, _)| scan[zid.min(7)].to_string())
            .collect();
        line += &format!(
            " {} {} {} {} {} {} {} {}/{} {} {}",
            zones.join(" "),
            sim.k.ev.get(Vm::Pgdeactivate),
            sim.k.ev.get(Vm::Pgrefill),
            d.balance_runs[1],
            d.high_order_low_prio_passes,
            d.lowest_priority.map_or(-1, |p| p),
            d.high_order_wakeups,
            d.high_order_ends[0],
            d.high_order_ends[1],
            d.balance_runs[0],
            sim.k.ev.get(Vm::KswapdHighWmarkHitQuickly),
        );
        // The load side, to set against the reporter's `vmstat 1` (bi/bo) and his 15 days of
        // /proc/vmstat (pgfree, pgmajfault, pgsteal): cumulative, so rates are differences.
        let ev = |v: Vm| sim.k.ev.get(v);
        let disks: Vec<String> =
            sim.k.disks.iter().map(|d| format!("{}/{}", d.bytes_read() / 1024, d.bytes_written() / 1024)).collect();
        let pgalloc = ev(Vm::PgallocDma) + ev(Vm::PgallocDma32) + ev(Vm::PgallocNormal);
        line += &format!(
            " | {} {pgalloc} {} {} {}",
            disks.join(" "),
            ev(Vm::Pgfree),
            ev(Vm::Pgmajfault),
            ev(Vm::PgstealKswapd) + ev(Vm::PgstealDirect),
        );
        // Machine-wide, to set beside the reporter's SysRq-M (22 Nov 2010) totals.
        let mib = |kb: u64| kb / 1024;
        let live = sim
            .s
            .tasks
            .iter()
            .filter(|t| t.kind == vmlab_core::sched::TaskKind::User && t.state != vmlab_core::sched::TState::Exited)
            .count();
        line += &format!(
            " | {}({}/{}) {}({}/{}) {} {} {} {} {} {} {} {live}",
            mib(mi.active_anon + mi.inactive_anon),
            mib(mi.active_anon),
            mib(mi.inactive_anon),
            mib(mi.active_file + mi.inactive_file),
            mib(mi.active_file),
            mib(mi.inactive_file),
            mib(mi.unevictable),
            mib(mi.mlocked),
            mib(mi.slab),
            mib(mi.page_tables),
            mib(mi.kernel_stack),
            mib(mi.mapped),
            sim.k.g.sock * 4 / 1024,
        );
        if let Some(a) = sim.k.tracer::<AllocMix>() {
            line += " |";
            for (zid, z) in sim.k.zones.iter().enumerate() {
                if z.present < 8192 {
                    continue;
                }
                let j = |v: &[u64; 4]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
                let z7 = zid.min(7);
                let m: Vec<String> = (0..3).map(|p| format!("{}({})", a.movable[z7][p], a.file[z7][p])).collect();
                line += &format!(" {} {} {}", m.join("/"), j(&a.kernel[z7]), j(&a.atomic[z7]));
            }
        }
        let (pages, objs) = slab_by_zone(&sim.k);
        let now = sim.k.tracer::<AllocMix>().cloned().unwrap_or_default();
        line += " |";
        for (zid, z) in sim.k.zones.iter().enumerate() {
            if z.present < 8192 {
                continue;
            }
            let z7 = zid.min(7);
            let c: Vec<String> =
                pages[zid].iter().map(|t| format!("{}({}/{}/{})", t.iter().sum::<u64>(), t[0], t[1], t[2])).collect();
            let ef: Vec<String> = (0..3)
                .map(|m| {
                    let d = |i: usize| now.extfrag[z7][m][i] - prev.extfrag[z7][m][i];
                    format!("{}({})", d(0), d(1))
                })
                .collect();
            line += &format!(
                " {} {} {} {} {} {}",
                z.kind.name(),
                c.join(" "),
                objs[zid][0],
                objs[zid][1],
                now.recl[z7] - prev.recl[z7],
                ef.join("/")
            );
        }
        prev = now;
        if let Some(v) = sim.k.vfs.as_ref() {
            line += &format!(" ; {} {} {}/{}", v.nr_dentry, v.nr_inodes_unused, v.pruned_dentries, v.pruned_inodes);
        }
        line += &format!(
            " {} {} {}",
            sim.k.ev.get(Vm::SlabsScanned),
            sim.k.ev.get(Vm::KswapdInodesteal) + sim.k.ev.get(Vm::Pginodesteal),
            sim.k.ev.get(Vm::Pswpout)
        );
        println!("{line}");
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
