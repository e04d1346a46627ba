//! Each release's own `/proc` files. A profile names its release's [`ProcFiles`]: the
//! `/proc/vmstat` names in `mm/vmstat.c`'s `vmstat_text` order (none before 2.6), the
//! `/proc/meminfo` lines of `fs/proc/meminfo.c` (2.6.28+) or `fs/proc/proc_misc.c`, and the
//! shape of `/proc/stat`. Every entry says where vmlab's value comes from; an entry whose
//! mechanism vmlab does not model is `Absent` and is not printed, so a file never shows a zero
//! that only means "not simulated". The tables are in [`tables`]; the values in [`source`].

pub mod source;
pub mod tables;

use crate::mmzone::ZoneType;
use crate::stats::vmstat::Vm;

pub use source::ProcSource;

/// One release's /proc layout.
#[derive(Debug)]
pub struct ProcFiles {
    /// The release whose source the tables follow (`2.6.36`), for messages and docs.
    pub release: &'static str,
    /// `/proc/vmstat`, or `None` where the release has no such file (2.4: its paging counters
    /// are `/proc/stat`'s `page` and `swap` lines).
    pub vmstat: Option<&'static [VmItem]>,
    pub meminfo: MeminfoLayout,
    pub stat: StatLayout,
}

/// A `/proc/vmstat` line: one counter, or one per zone type (`TEXTS_FOR_ZONES`: `pgalloc_dma`,
/// `pgalloc_dma32`, ...). The kernel prints a per-zone counter for every zone type its config
/// has; vmlab's machine's zone types stand in for the config.
#[derive(Clone, Copy, Debug)]
pub enum VmItem {
    One(&'static str, V),
    PerZone(&'static str, ZoneItem),
}

/// Where a `/proc/vmstat` value comes from.
#[derive(Clone, Copy, Debug)]
pub enum V {
    /// Not modelled: not printed.
    Absent,
    /// A name the release keeps printing as 0 for compatibility.
    Zero,
    Ev(Vm),
    Gauge(Gauge),
}

/// Per-zone counters (`count_zone_vm_events` in 2.6; `pgalloc_*` and `allocstall_*` in 6.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneItem {
    Alloc,
    Allocstall,
    Refill,
    /// 2.6 `pgsteal_<zone>`: kswapd and direct reclaim together.
    Steal,
    ScanKswapd,
    ScanDirect,
    Absent,
}

/// The `nr_*` gauges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gauge {
    FreePages,
    /// Pages on the engine's lists that the era's meminfo calls this (`Inactive(anon)`, `Active`).
    Lru(&'static str),
    Mlock,
    /// NR_ANON_PAGES / NR_ANON_MAPPED: anonymous pages mapped by some process.
    AnonMapped,
    FileMapped,
    FilePages,
    Dirty,
    Writeback,
    /// NR_ZONE_WRITE_PENDING: dirty + writeback.
    WritePending,
    Shmem,
    SlabUnreclaimable,
    PageTables,
    /// 6.x counts kernel stacks in kB ...
    KernelStackKb,
    /// ... 2.6.3x in pages.
    KernelStackPages,
    SwapCache,
}

/// `/proc/meminfo`'s lines and their label width (`"MemTotal:     %8lu kB"` is 14 in 2.4 and
/// 2.6.26's proc_misc.c; meminfo.c made it 16 in 2.6.28).
#[derive(Debug)]
pub struct MeminfoLayout {
    pub label_width: usize,
    /// 2.4's `total: used: free: shared: buffers: cached:` table in bytes before the kB lines.
    pub bytes_table: bool,
    pub lines: &'static [(&'static str, M)],
}

/// Where a `/proc/meminfo` value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum M {
    Absent,
    /// A value the kernel of that release always reports as 0 (2.4's `MemShared`).
    Zero,
    MemTotal,
    MemFree,
    MemAvailable,
    Buffers,
    Cached,
    SwapCached,
    /// Active + Inactive of the split LRU (6.x, 2.6.28+).
    Active,
    Inactive,
    /// The engine's lists of that meminfo name (`Inact_dirty`, `Active(anon)`, 2.6.26's `Active`).
    List(&'static str),
    /// 2.4.9's `inactive_target`.
    InactTarget,
    Unevictable,
    Mlocked,
    /// CONFIG_HIGHMEM lines, printed only on a machine with a HighMem zone ...
    High(HighLine),
    /// ... or always, as 2.4 does (LowTotal = MemTotal without highmem).
    HighAlways(HighLine),
    SwapTotal,
    SwapFree,
    Dirty,
    Writeback,
    AnonPages,
    Mapped,
    Shmem,
    /// 6.x KReclaimable: SReclaimable + other reclaimable kernel memory (vmlab: SReclaimable).
    KReclaimable,
    Slab,
    SReclaimable,
    SUnreclaim,
    KernelStack,
    PageTables,
    /// CONFIG_QUICKLIST: printed for profiles with quicklists.
    Quicklists,
    CommitLimit,
    CommittedAs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HighLine {
    HighTotal,
    HighFree,
    LowTotal,
    LowFree,
}

/// `/proc/stat`'s shape.
#[derive(Debug)]
pub struct StatLayout {
    /// Fields of the `cpu` lines: 4 in 2.4 (user nice system idle), 9 in 2.6.26 (+ iowait irq
    /// softirq steal guest), 10 from 2.6.33 (+ guest_nice).
    pub cpu_fields: usize,
    /// 2.4's `page IN OUT` (kB) and `swap IN OUT` (pages) lines.
    pub paging_lines: bool,
    /// `procs_running` / `procs_blocked` (2.5+).
    pub procs_lines: bool,
}

impl ProcFiles {
    /// The `/proc/vmstat` (name, value) pairs this release prints for `src`, in its order.
    /// Empty for a release without the file.
    pub fn vmstat(&self, src: &ProcSource) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for item in self.vmstat.unwrap_or(&[]) {
            match *item {
                VmItem::One(name, v) => {
                    if let Some(x) = src.value(v) {
                        out.push((name.to_string(), x));
                    }
                }
                VmItem::PerZone(_, ZoneItem::Absent) => {}
                VmItem::PerZone(prefix, z) => {
                    for &zt in &src.zone_types {
                        out.push((format!("{prefix}_{}", zone_suffix(zt)), src.zone_value(zt, z)));
                    }
                }
            }
        }
        out
    }

    /// The `/proc/meminfo` (name, kB) pairs this release prints for `src`.
    pub fn meminfo(&self, src: &ProcSource) -> Vec<(&'static str, u64)> {
        self.meminfo.lines.iter().filter_map(|&(name, m)| src.meminfo_kb(m).map(|v| (name, v))).collect()
    }

    /// The whole `/proc/vmstat` text (`None` for a release without it).
    pub fn vmstat_text(&self, src: &ProcSource) -> Option<String> {
        self.vmstat?;
        Some(self.vmstat(src).into_iter().map(|(n, v)| format!("{n} {v}\n")).collect())
    }

    /// The whole `/proc/meminfo` text.
    pub fn meminfo_text(&self, src: &ProcSource) -> String {
        let w = self.meminfo.label_width;
        let mut s = String::new();
        if self.meminfo.bytes_table {
            s.push_str(&src.meminfo_bytes_table());
        }
        for (name, kb) in self.meminfo(src) {
            s.push_str(&format!("{:<w$}{:>8} kB\n", format!("{name}:"), kb));
        }
        s
    }

    /// The whole `/proc/stat` text.
    pub fn stat_text(&self, src: &ProcSource) -> String {
        src.stat_text(&self.stat)
    }
}

/// The zone part of a per-zone counter's name (`zone_names[]` lower-cased, as vmstat_text has it).
pub fn zone_suffix(z: ZoneType) -> &'static str {
    match z {
        ZoneType::Dma => "dma",
        ZoneType::Dma32 => "dma32",
        ZoneType::Normal => "normal",
        ZoneType::HighMem => "high",
        ZoneType::Movable => "movable",
    }
}

/// All the names a table can print, in order, for a machine with every zone type (tests hold
/// this order against a release's recorded list).
pub fn all_vmstat_names(items: &[VmItem]) -> Vec<String> {
    let zts = [ZoneType::Dma, ZoneType::Dma32, ZoneType::Normal, ZoneType::HighMem, ZoneType::Movable];
    let mut v = Vec::new();
    for it in items {
        match *it {
            VmItem::One(n, _) => v.push(n.to_string()),
            VmItem::PerZone(p, _) => v.extend(zts.iter().map(|&z| format!("{p}_{}", zone_suffix(z)))),
        }
    }
    v
}
