//! The values behind the /proc tables: read from the kernel's counters and gauges when a file
//! is written, never in a hot path.

use std::fmt::Write;

use super::{Gauge, HighLine, StatLayout, ZoneItem, M, V};
use crate::kernel::Kernel;
use crate::mmzone::{
    ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::profiles::QuicklistRule;
use crate::stats::meminfo::{HighMem, Meminfo};
use crate::stats::vmstat::Vm;

/// Scheduler totals `/proc/stat` needs (the kernel keeps them in `kernel_cpustat` and the
/// runqueues; vmlab's scheduler is outside the kernel model).
#[derive(Clone, Debug, Default)]
pub struct StatData {
    /// Per CPU: user and system time, ns.
    pub cpu_us_ns: Vec<u64>,
    pub cpu_sy_ns: Vec<u64>,
    /// Simulated time elapsed, ns.
    pub elapsed_ns: u64,
    /// CPU time idle with a task waiting for I/O, ns (summed over CPUs).
    pub iowait_ns: u64,
    pub nr_irqs: u64,
    pub nr_switches: u64,
    pub processes: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
}

pub struct ProcSource<'a> {
    k: &'a Kernel,
    mi: Meminfo,
    /// The machine's zone types in zone order, each once.
    pub zone_types: Vec<ZoneType>,
    stat: StatData,
}

impl<'a> ProcSource<'a> {
    pub fn new(k: &'a Kernel, stat: StatData) -> ProcSource<'a> {
        let mut zone_types: Vec<ZoneType> = k.zones.iter().map(|z| z.kind).collect();
        zone_types.sort_by_key(|z| *z as usize);
        zone_types.dedup();
        ProcSource { k, mi: meminfo_of(k), zone_types, stat }
    }

    pub fn meminfo_struct(&self) -> &Meminfo {
        &self.mi
    }

    pub fn value(&self, v: V) -> Option<u64> {
        match v {
            V::Absent => None,
            V::Zero => Some(0),
            V::Ev(c) => Some(self.k.ev.get(c)),
            V::Gauge(g) => Some(self.gauge(g)),
        }
    }

    fn lru(&self, name: &str) -> u64 {
        (0..self.k.zones.len()).map(|z| crate::vmscan::zone_lru_pages(self.k, z, name)).sum()
    }

    fn gauge(&self, g: Gauge) -> u64 {
        let k = self.k;
        match g {
            Gauge::FreePages => k.nr_free_pages(),
            Gauge::Lru(name) => self.lru(name),
            Gauge::Mlock => k.g.mlock,
            Gauge::AnonMapped => k.g.anon_mapped,
            Gauge::FileMapped => k.g.mapped,
            Gauge::FilePages => k.g.file + k.g.swapcache,
            Gauge::Dirty => k.g.dirty,
            Gauge::Writeback => k.g.writeback,
            Gauge::WritePending => k.g.dirty + k.g.writeback,
            Gauge::Shmem => k.g.shmem,
            Gauge::SlabUnreclaimable => k.g.slab,
            Gauge::PageTables => k.g.pagetable,
            Gauge::KernelStackKb => k.g.kernel_stack * 4,
            Gauge::KernelStackPages => k.g.kernel_stack,
            Gauge::SwapCache => k.g.swapcache,
        }
    }

    /// A per-zone counter summed over the zones of type `zt`.
    pub fn zone_value(&self, zt: ZoneType, item: ZoneItem) -> u64 {
        let k = self.k;
        let per_zone = |f: fn(&crate::mmzone::ZoneEvents) -> u64| -> u64 {
            k.zones.iter().filter(|z| z.kind == zt).map(|z| f(&z.ev)).sum()
        };
        match item {
            ZoneItem::Alloc => k.ev.get(match zt {
                ZoneType::Dma => Vm::PgallocDma,
                ZoneType::Dma32 => Vm::PgallocDma32,
                ZoneType::Normal => Vm::PgallocNormal,
                ZoneType::HighMem => Vm::PgallocHigh,
                ZoneType::Movable => Vm::PgallocMovable,
            }),
            ZoneItem::Allocstall => match zt {
                ZoneType::Dma => k.ev.get(Vm::AllocstallDma),
                ZoneType::Dma32 => k.ev.get(Vm::AllocstallDma32),
                ZoneType::Normal => k.ev.get(Vm::AllocstallNormal),
                ZoneType::Movable => k.ev.get(Vm::AllocstallMovable),
                ZoneType::HighMem => 0,
            },
            ZoneItem::Refill => per_zone(|e| e.pgrefill),
            ZoneItem::Steal => per_zone(|e| e.pgsteal_kswapd + e.pgsteal_direct),
            ZoneItem::ScanKswapd => per_zone(|e| e.pgscan_kswapd),
            ZoneItem::ScanDirect => per_zone(|e| e.pgscan_direct),
            ZoneItem::Absent => 0,
        }
    }

    /// A meminfo line's value in kB, `None` when the release does not print it here.
    pub fn meminfo_kb(&self, m: M) -> Option<u64> {
        let mi = &self.mi;
        let kb = |p: u64| p * 4;
        Some(match m {
            M::Absent => return None,
            M::Zero => 0,
            M::MemTotal => mi.mem_total,
            M::MemFree => mi.mem_free,
            M::MemAvailable => mi.mem_available,
            M::Buffers => mi.buffers,
            M::Cached => mi.cached,
            M::SwapCached => mi.swap_cached,
            M::Active => mi.active,
            M::Inactive => mi.inactive,
            M::List(name) => kb(self.lru(name)),
            M::InactTarget => kb(crate::vmscan::inactive_target(self.k)?),
            M::Unevictable => mi.unevictable,
            M::Mlocked => mi.mlocked,
            M::High(h) => high(mi.highmem?, h),
            M::HighAlways(h) => high(
                mi.highmem.unwrap_or(HighMem { low_total: mi.mem_total, low_free: mi.mem_free, ..Default::default() }),
                h,
            ),
            M::SwapTotal => mi.swap_total,
            M::SwapFree => mi.swap_free,
            M::Dirty => mi.dirty,
            M::Writeback => mi.writeback,
            M::AnonPages => mi.anon_pages,
            M::Mapped => mi.mapped,
            M::Shmem => mi.shmem,
            M::KReclaimable => mi.s_reclaimable,
            M::Slab => mi.slab,
            M::SReclaimable => mi.s_reclaimable,
            M::SUnreclaim => mi.s_unreclaim,
            M::KernelStack => mi.kernel_stack,
            M::PageTables => mi.page_tables,
            M::Quicklists => mi.quicklists?,
            M::CommitLimit => mi.commit_limit,
            M::CommittedAs => mi.committed_as,
        })
    }

    /// 2.4's byte table: `Mem:` total used free shared buffers cached, `Swap:` total used free.
    pub fn meminfo_bytes_table(&self) -> String {
        let mi = &self.mi;
        let b = |kb: u64| kb * 1024;
        format!(
            "        total:    used:    free:  shared: buffers:  cached:\nMem:  {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\nSwap: {:>8} {:>8} {:>8}\n",
            b(mi.mem_total),
            b(mi.mem_total - mi.mem_free),
            b(mi.mem_free),
            0,
            b(mi.buffers),
            b(mi.cached + mi.swap_cached),
            b(mi.swap_total),
            b(mi.swap_total - mi.swap_free),
            b(mi.swap_free)
        )
    }

    /// `/proc/stat` in the release's shape. Times are in USER_HZ (100) ticks; vmlab has no nice,
    /// irq, softirq, steal or guest time, so those fields are 0.
    pub fn stat_text(&self, layout: &StatLayout) -> String {
        let st = &self.stat;
        let ticks = |ns: u64| ns / 10_000_000;
        let ncpu = st.cpu_us_ns.len().max(1) as u64;
        let mut rows: Vec<[u64; 4]> = Vec::new();
        for (us, sy) in st.cpu_us_ns.iter().zip(&st.cpu_sy_ns) {
            // iowait is one machine-wide sum: each CPU gets an even share of it.
            let wa = st.iowait_ns / ncpu;
            let idle = st.elapsed_ns.saturating_sub(us + sy);
            let (idle, wa) = if layout.cpu_fields >= 5 { (idle.saturating_sub(wa), wa) } else { (idle, 0) };
            rows.push([ticks(*us), ticks(*sy), ticks(idle), ticks(wa)]);
        }
        let sum: [u64; 4] = rows.iter().fold([0; 4], |a, r| [a[0] + r[0], a[1] + r[1], a[2] + r[2], a[3] + r[3]]);
        let line = |label: &str, r: &[u64; 4]| {
            // user nice system idle [iowait irq softirq steal guest [guest_nice]]
            let mut f = vec![r[0], 0, r[1], r[2]];
            if layout.cpu_fields >= 5 {
                f.push(r[3]);
            }
            f.resize(layout.cpu_fields, 0);
            let nums: Vec<String> = f.iter().map(u64::to_string).collect();
            format!("{label} {}\n", nums.join(" "))
        };
        let mut s = line("cpu ", &sum);
        for (i, r) in rows.iter().enumerate() {
            s.push_str(&line(&format!("cpu{i}"), r));
        }
        if layout.paging_lines {
            let ev = &self.k.ev;
            let _ = writeln!(s, "page {} {}", ev.get(Vm::Pgpgin), ev.get(Vm::Pgpgout));
            let _ = writeln!(s, "swap {} {}", ev.get(Vm::Pswpin), ev.get(Vm::Pswpout));
        }
        let _ = writeln!(s, "intr {}", st.nr_irqs);
        let _ = writeln!(s, "ctxt {}", st.nr_switches);
        let _ = writeln!(s, "btime 0");
        let _ = writeln!(s, "processes {}", st.processes);
        if layout.procs_lines {
            let _ = writeln!(s, "procs_running {}", st.procs_running);
            let _ = writeln!(s, "procs_blocked {}", st.procs_blocked);
        }
        s
    }
}

fn high(h: HighMem, l: HighLine) -> u64 {
    match l {
        HighLine::HighTotal => h.high_total,
        HighLine::HighFree => h.high_free,
        HighLine::LowTotal => h.low_total,
        HighLine::LowFree => h.low_free,
    }
}

/// The meminfo values vmlab models, in kB.
pub fn meminfo_of(k: &Kernel) -> Meminfo {
    let kb = |p: u64| p * 4;
    let lru_total = |l: usize| -> u64 { k.zones.iter().map(|z| z.lru_pages[l]).sum() };
    let free = k.nr_free_pages();
    let managed: u64 = k.zones.iter().map(|z| z.managed).sum();
    let ia = lru_total(LRU_INACTIVE_ANON);
    let aa = lru_total(LRU_ACTIVE_ANON);
    let ifl = lru_total(LRU_INACTIVE_FILE);
    let af = lru_total(LRU_ACTIVE_FILE);
    let unev = lru_total(LRU_UNEVICTABLE);
    let low: u64 = k.zones.iter().map(|z| z.low_wmark()).sum();
    let reserve: u64 = k.zones.iter().map(|z| z.high_wmark()).sum();
    let pagecache = ifl + af;
    let avail = free.saturating_sub(reserve) + pagecache - (pagecache / 2).min(low);
    let (swap_total, swap_free) = crate::swap_state::si_swapinfo(k);
    let has_high = k.zones.iter().any(|z| z.kind == ZoneType::HighMem);
    let highmem = has_high.then(|| {
        let ht: u64 = k.zones.iter().filter(|z| z.kind == ZoneType::HighMem).map(|z| z.managed).sum();
        let hf: u64 =
            k.zones.iter().enumerate().filter(|(_, z)| z.kind == ZoneType::HighMem).map(|(i, _)| k.zone_free(i)).sum();
        HighMem { high_total: kb(ht), high_free: kb(hf), low_total: kb(managed - ht), low_free: kb(free - hf) }
    });
    let committed: u64 = k
        .mms
        .iter()
        .flatten()
        .map(|m| {
            m.vmas
                .iter()
                .filter(|v| v.flags & crate::mmap::vm::WRITE != 0 && v.flags & crate::mmap::vm::SHARED == 0)
                .map(|v| v.pages())
                .sum::<u64>()
        })
        .sum();
    Meminfo {
        mem_total: kb(managed),
        mem_free: kb(free),
        mem_available: kb(avail),
        buffers: 0,
        cached: kb(k.g.file),
        swap_cached: kb(k.g.swapcache),
        active: kb(aa + af),
        inactive: kb(ia + ifl),
        active_anon: kb(aa),
        inactive_anon: kb(ia),
        active_file: kb(af),
        inactive_file: kb(ifl),
        unevictable: kb(unev),
        mlocked: kb(k.g.mlock),
        highmem,
        swap_total: kb(swap_total),
        swap_free: kb(swap_free),
        dirty: kb(k.g.dirty),
        writeback: kb(k.g.writeback),
        // AnonPages counts mapped anonymous pages (NR_ANON_MAPPED): swap cache that no process
        // maps any more is SwapCached only.
        anon_pages: kb(k.g.anon_mapped),
        mapped: kb(k.g.mapped),
        shmem: kb(k.g.shmem),
        slab: kb(k.g.slab),
        s_reclaimable: 0,
        s_unreclaim: kb(k.g.slab),
        kernel_stack: kb(k.g.kernel_stack),
        page_tables: kb(k.g.pagetable),
        quicklists: if k.profile.quicklist != QuicklistRule::None { Some(kb(k.g.quicklist)) } else { None },
        commit_limit: kb(swap_total + managed / 2),
        committed_as: kb(committed + k.g.shmem),
    }
}
