//! The simulated kernel's memory-manager state: frames, zones, nodes, address spaces, files,
//! swap, disks, counters. Mechanism code lives in the modules named after `mm/` files and acts on
//! this struct; the scheduler (`sched.rs`) owns tasks and time and calls in with a `Ctx`.

use rustc_hash::FxHashMap;

use crate::disk::Disk;
use crate::filemap::File;
use crate::machine::{CostTable, MachineConfig};
use crate::mm_types::{pg, Frames, List, Pfn};
use crate::mmap::{AnonVma, Mm, PteStore};
use crate::mmzone::{KswapdState, Lruvec, Node, Pcp, Zone, MAX_ORDER, MIGRATE_TYPES, PAGEBLOCK_ORDER};
use crate::profiles::Profile;
use crate::stats::kfunc::{KFunc, KernelProfile};
use crate::stats::vmstat::VmEvents;
use crate::swap_state::SwapInfo;

/// The context kernel code runs in: which CPU and task, and what the work has cost so far.
/// Costs accumulate here; the scheduler turns them into busy CPU time.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    pub cpu: u32,
    pub node: usize,
    pub task: usize,
    /// Simulated time at the start of this piece of work.
    pub now: u64,
    pub sys_ns: u64,
    pub user_ns: u64,
    /// Time the task must sleep after this piece of work (throttling, congestion_wait).
    pub sleep_ns: u64,
    pub is_kswapd: bool,
    /// PF_MEMALLOC: inside reclaim; no recursion into reclaim.
    pub in_reclaim: bool,
    /// Set when the OOM killer chose this context's process.
    pub oom_victim: bool,
    /// The mm of the process this context works for.
    pub mm: Option<u32>,
    /// The flusher (it paces itself against the queue instead of sleeping per write).
    pub is_flusher: bool,
    /// FAULT_FLAG_TRIED: this fault re-enters one that waited for this page's I/O.
    pub fault_tried: bool,
    /// This call continues a fault that slept inside `handle_mm_fault` (mmap_sem held across
    /// the I/O): the kernel made one call, vmlab re-enters it after the wait.
    pub fault_resumed: bool,
    /// Set when an allocation throttled: sleep until then (or a writeback wakeup).
    pub throttle_until: u64,
    /// The part of `sleep_ns` owed to a `reclaim_throttle` wait (`vmscan::throttle`), which a
    /// wakeup while the task still runs this quantum cancels.
    pub throttle_sleep_ns: u64,
    /// When the last `reclaim_throttle` wait of this quantum times out (0: none): a block
    /// until then is that wait.
    pub throttle_deadline: u64,
    /// The last allocation that failed returned NoMemory (it was refused, not postponed).
    pub alloc_refused: bool,
    /// Limit reclaim stopped because writes it started this quantum would have completed by
    /// now: the quantum ends so that their completions (and `folio_rotate_reclaimable`) come
    /// before it scans again (6.8's limit reclaim).
    pub resched: bool,
}

impl Ctx {
    /// The simulated time reached by the work done so far.
    #[inline]
    pub fn clock(&self) -> u64 {
        self.now + self.sys_ns + self.user_ns
    }
}

/// Page counts kept per state (the `nr_*` gauges of /proc/vmstat and the meminfo fields).
#[derive(Clone, Debug, Default)]
pub struct Gauges {
    /// Anonymous pages, mapped or only in the swap cache.
    pub anon: u64,
    /// Anonymous pages some PTE maps (NR_ANON_MAPPED, meminfo `AnonPages`).
    pub anon_mapped: u64,
    pub file: u64,
    pub shmem: u64,
    pub mapped: u64,
    pub dirty: u64,
    pub writeback: u64,
    pub pagetable: u64,
    pub quicklist: u64,
    pub slab: u64,
    pub reserved: u64,
    pub swapcache: u64,
    pub mlock: u64,
    pub isolated: u64,
    /// New pages waiting in per-CPU LRU-add pagevecs, on no list yet (`vmscan::swap`).
    pub lru_pvec: u64,
    pub kernel_stack: u64,
    /// Lowmem bounce pages under read I/O for HighMem pages (2.4 `create_bounce`).
    pub bounce: u64,
    /// Pages on TCP sockets' write queues (sockstat's TCP mem; in no meminfo field).
    pub sock: u64,
    /// Pages of long-lived kernel allocators (`kmem.rs`: driver pools, pipe buffers, vmalloc):
    /// in no meminfo field either.
    pub kmem: u64,
}

/// A completed block I/O, delivered by the scheduler at its completion time.
#[derive(Clone, Debug)]
pub enum IoDone {
    /// Pages read into the page/swap cache from `disk`: unlock them. `irq`: the request's own
    /// interrupt (false for a submission merged into the one before it).
    Read { pages: Vec<Pfn>, disk: usize, irq: bool },
    /// Pages written back to `disk`: end writeback (and rotate PG_reclaim pages).
    Write { pages: Vec<Pfn>, disk: usize, irq: bool },
    /// The file system's completion worker on `disk` (ext4's `ext4-rsv-conversion` work after
    /// an unwritten extent's conversion) has ended `ends` more folios of its io_ends by now, not
    /// an interrupt: the folios themselves end at their own instants (`ext4_page_io`).
    Release { disk: usize, ends: u32 },
    /// Bounce pages of a finished read (`bounce_end_io_read` copies, then `__free_page`).
    Bounce(Vec<Pfn>),
}

pub struct Kernel {
    pub profile: Profile,
    pub cfg: MachineConfig,
    pub cost: CostTable,
    pub fr: Frames,
    pub zones: Vec<Zone>,
    pub nodes: Vec<Node>,
    /// Zone id of every 512-frame group of the packed frames (not the memory map's pageblocks,
    /// `pageblock_mt`'s): O(1) `zone_of`.
    pub pageblock_zone: Vec<u8>,
    /// Zonelists: [node][highest zone type] → zone ids in fallback order.
    pub zonelists: Vec<Vec<Vec<usize>>>,
    /// The reclaim engine's own state (lists it keeps beyond the zones' and nodes', cursors,
    /// per-zone and per-node locals).
    pub reclaim: crate::vmscan::EngineState,
    /// Each pageblock's migrate type, by the memory map's pfn (`Kernel::pageblock_of`).
    pub pageblock_mt: Vec<u8>,
    pub ev: VmEvents,
    pub prof: KernelProfile,
    pub g: Gauges,
    pub min_free_kbytes: u64,
    pub mms: Vec<Option<Mm>>,
    pub anon_vmas: Vec<AnonVma>,
    pub pt: PteStore,
    pub files: Vec<File>,
    pub file_ids: crate::namei::NameTable,
    pub swap: Option<SwapInfo>,
    pub disks: Vec<Disk>,
    /// Pages with read I/O in flight → completion time (waiters sleep until then).
    pub inflight: FxHashMap<Pfn, u64>,
    /// I/O completions the scheduler must deliver: (time, what).
    pub io_queue: Vec<(u64, IoDone)>,
    /// The earliest completion of a write in `io_queue` (u64::MAX: none). The queue holds what
    /// the running task started this quantum, so these are its own writes.
    pub io_queue_first_write: u64,
    /// The io_ends ext4's conversion worker is ending, folio by folio (`ext4_page_io`).
    pub releases: crate::ext4_page_io::Releases,
    /// Loop devices' command lists and workers (`loop_dev`).
    pub loops: crate::loop_dev::Loops,
    /// Reused by `collect_dispatched`.
    blk_dispatched: Vec<(u64, Vec<Pfn>)>,
    /// The running reclaimer's plug over its swap writes (`swap_state::SwapPlug`).
    pub swap_plug: crate::swap_state::SwapPlug,
    /// Tasks to make runnable (kswapd wakeups, lock grants); drained by the scheduler.
    pub wakeups: Vec<usize>,
    /// Tasks asleep on a page whose read a 2.4 queue still lists (its end not known yet).
    listed_read_waiters: Vec<(Pfn, usize)>,
    /// Their wakeups, once the driver took the read: when, and the task.
    pub read_wakes: Vec<(u64, usize)>,
    /// Tasks woken from a `reclaim_wait` queue (`vmscan::throttle`): a running one does not
    /// sleep for the throttle when its quantum ends.
    pub throttle_wakeups: Vec<usize>,
    /// Per-CPU page-table quicklists (profiles with quicklists).
    pub quicklists: Vec<List>,
    /// Inodes in use outside the scenario's files (`machine.inodes_in_use`), which
    /// `get_nr_dirty_pages` adds to the dirty pages (page_writeback.rs).
    pub inodes_in_use: u64,
    /// The flushers' writeback contexts (`bdi_writeback`, page_writeback.rs): one per backing
    /// device with a flusher of its own, the first serving every other disk.
    pub wbs: Vec<crate::page_writeback::Wb>,
    /// The writeback context of each disk (`disk_wb[d]`); a disk not listed is the first's.
    pub disk_wb: Vec<usize>,
    pub now: u64,
    /// The interrupt/softirq stream (`prandom::Stream::Softirq`); processes draw from their own.
    pub rng: rand_pcg::Pcg64,
    /// Simulated page events processed (faults, scans, I/O pages): the benchmark's unit.
    pub events: u64,
    /// Tasks sleeping in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK), woken after
    /// SWAP_CLUSTER_MAX pages finish writeback (or HZ/10).
    pub throttled: Vec<usize>,
    pub wb_done_since_wake: u64,
    /// Scratch buffer for rmap walks (reused: no allocation per walk).
    pub rmap_buf: Vec<crate::rmap::Mapping>,
    /// Scratch buffer for isolated pages.
    pub isolate_buf: Vec<Pfn>,
    /// Compaction's isolated-page buffers and per-zone deferral (`compaction.rs`).
    pub compact: crate::compaction::CompactState,
    /// Tail frames of the large folios on LRU lists: a list holds a folio once, by its head.
    pub lru_folio_tails: u64,
    /// The shared zero page (read faults on anonymous memory map it).
    pub zero_pfn: Pfn,
    /// Processes killed by the OOM killer (by mm id) — the scheduler terminates their tasks.
    pub oom_killed: Vec<u32>,
    /// mmap_sem contention of address spaces that have exited (live ones keep their own).
    pub mmap_sem_retired: crate::sched_lock::RwSemStats,
    /// Filesystem metadata slab caches (a scenario's `[fs]`), else None.
    pub vfs: Option<Box<crate::dcache::Vfs>>,
    /// `[fork]`: the task_struct cache and kernel stack order (None: tasks cost no kernel memory).
    pub task_mem: Option<Box<crate::fork::TaskMem>>,
    pub tcp: crate::tcp::Tcp,
    /// Free page reporting to a hypervisor (`machine.page_reporting_order`; off by default).
    pub page_reporting: crate::page_reporting::PageReporting,
    /// Observers of tracepoints (`crate::trace`), and whether any is attached.
    pub tracers: Vec<Box<dyn crate::trace::Tracer>>,
    pub tracing: bool,
    /// The union of the attached observers' `Tracer::wants`.
    pub trace_mask: u32,
    /// Task, CPU and time of the tracepoint being delivered.
    pub trace_at: crate::trace::TraceAt,
    /// The gfp mask of the allocation in the slow path (for `mm_vmscan_wakeup_kswapd`).
    pub trace_gfp: crate::trace::GfpKind,
    /// kswapd CPU time by what kept it awake (`vmlab explain`).
    pub kswapd_why: crate::stats::explain::KswapdWhy,
    /// Memory cgroups (empty but for the root when the scenario has none).
    pub memcg: crate::memcontrol::MemCgroups,
    /// Scratch buffer for reclaim's walk over the groups.
    pub memcg_walk: Vec<u8>,
    /// A workingset refault has just been read in (the fault that waits for it is a memstall).
    pub psi_workingset_read: bool,
    /// Readahead running for a page fault (`filemap_fault`'s), not for `read()`: which per-folio
    /// cost entry its folios charge (`charge_readahead_folio`).
    pub ra_for_fault: bool,
    /// System-wide memory pressure (`/proc/pressure/memory`).
    pub psi: crate::psi::PsiGroup,
    /// Labelled what-ifs an observer harness may switch on (`whatif.rs`); all off by default.
    pub whatif: crate::whatif::WhatIf,
}

impl Kernel {
    pub fn new(profile: Profile, cfg: MachineConfig, seed: u64) -> Result<Kernel, String> {
        let total = cfg.total_pages();
        if total > (1u64 << 28) {
            return Err(format!("machine.memory is {} GiB; vmlab supports up to 1 TiB", total >> 18));
        }
        let mut at = 0;
        for (z, start) in cfg.zones.iter().zip(cfg.zone_start_pfns()) {
            if start < at {
                return Err(format!(
                    "machine: the {} zone starts at pfn {start}, inside the zone before it",
                    z.kind.name()
                ));
            }
            at = start + z.pages;
        }
        let cost = CostTable::for_mhz(cfg.cpu_mhz);
        let symbols = profile.symbols;
        let mut k = Kernel {
            profile,
            cost,
            fr: Frames::new(total as usize),
            zones: Vec::new(),
            nodes: Vec::new(),
            reclaim: crate::vmscan::EngineState::Modern,
            pageblock_zone: Vec::new(),
            zonelists: Vec::new(),
            pageblock_mt: vec![crate::mmzone::Mt::Movable as u8; ((total >> PAGEBLOCK_ORDER) + 1) as usize],
            ev: VmEvents::default(),
            prof: KernelProfile::new(symbols),
            g: Gauges::default(),
            min_free_kbytes: 0,
            mms: Vec::new(),
            anon_vmas: Vec::new(),
            pt: PteStore::default(),
            files: Vec::new(),
            file_ids: Default::default(),
            swap: None,
            disks: Vec::new(),
            inflight: FxHashMap::default(),
            io_queue: Vec::new(),
            io_queue_first_write: u64::MAX,
            releases: Default::default(),
            loops: Default::default(),
            blk_dispatched: Vec::new(),
            swap_plug: Default::default(),
            wakeups: Vec::new(),
            listed_read_waiters: Vec::new(),
            read_wakes: Vec::new(),
            throttle_wakeups: Vec::new(),
            quicklists: vec![List::default(); cfg.cpus as usize],
            inodes_in_use: 0,
            wbs: vec![Default::default()],
            disk_wb: Vec::new(),
            now: 0,
            rng: crate::prandom::stream(seed, crate::prandom::Stream::Softirq, 0),
            events: 0,
            oom_killed: Vec::new(),
            rmap_buf: Vec::new(),
            throttled: Vec::new(),
            wb_done_since_wake: 0,
            isolate_buf: Vec::new(),
            compact: Default::default(),
            lru_folio_tails: 0,
            zero_pfn: 0,
            tracers: Vec::new(),
            tracing: false,
            trace_mask: 0,
            trace_at: Default::default(),
            trace_gfp: crate::trace::GfpKind::Kernel,
            kswapd_why: Default::default(),
            memcg: crate::memcontrol::MemCgroups {
                groups: vec![crate::memcontrol::MemCgroup::new_root()],
                flushed_period: u64::MAX,
                polled_period: u64::MAX,
            },
            psi: Default::default(),
            whatif: Default::default(),
            memcg_walk: Vec::new(),
            psi_workingset_read: false,
            ra_for_fault: false,
            cfg,
            mmap_sem_retired: Default::default(),
            vfs: None,
            task_mem: None,
            tcp: Default::default(),
            page_reporting: Default::default(),
        };
        k.build_zones();
        Ok(k)
    }

    fn build_zones(&mut self) {
        let ncpu = self.cfg.cpus as usize;
        let mut pfn = 0u32;
        for n in 0..self.cfg.nodes as usize {
            self.nodes.push(Node {
                id: n,
                zones: Vec::new(),
                cpus: self.cfg.cpus_of_node(n as u32),
                lruvec: Lruvec::default(),
                kswapd: KswapdState::default(),
                reclaim_wait: Default::default(),
                start_pfn: 0,
                end_pfn: 0,
            });
        }
        let layout = self.cfg.zones.clone();
        let phys_starts = self.cfg.zone_start_pfns();
        for (zl, &phys_start) in layout.iter().zip(&phys_starts) {
            let id = self.zones.len();
            let start = pfn;
            let end = pfn + zl.pages as u32;
            pfn = end;
            // Per-CPU lists: `zone_batchsize`: a 1/1024 of the zone capped by the era's limit,
            // quartered, then rounddown_pow_of_two(batch * 1.5) - 1 (31 in 2.6.36, 63 in 6.8).
            let cap = (self.profile.pcp_batch_bytes / 4096).max(4);
            let b = ((zl.pages / 1024).min(cap) / 4).max(1);
            let x = b + b / 2;
            let batch = ((1u64 << (63 - x.leading_zeros())) - 1).max(1);
            let pcp_cpus = if self.profile.pcp_lists { ncpu } else { 0 };
            let pcp = vec![Pcp { lists: [List::default(); 3], high: 6 * batch, batch }; pcp_cpus];
            self.zones.push(Zone {
                id,
                kind: zl.kind,
                node: zl.node,
                start_pfn: start,
                end_pfn: end,
                phys_start_pfn: phys_start as u32,
                present: zl.pages,
                managed: zl.pages,
                bootmem: 0,
                free_area: [[List::default(); MIGRATE_TYPES]; MAX_ORDER],
                nr_free: [0; MAX_ORDER],
                free_pages: 0,
                wmark: [0; 3],
                watermark_boost: 0,
                lowmem_reserve: vec![0; 5],
                pcp,
                lruvec: Lruvec::default(),
                lru_pages: [0; crate::mmzone::NR_LRU_LISTS],
                ev: Default::default(),
            });
            let node = &mut self.nodes[zl.node];
            if node.zones.is_empty() {
                node.start_pfn = start;
            }
            node.end_pfn = end;
            node.zones.push(id);
        }
        for p in 0..self.fr.len() {
            self.fr.set_lru_list(p as Pfn, crate::mmzone::LRU_NONE);
        }
        // Pageblocks are numbered on the memory map: the few of the hole are never used.
        let phys_end = self.zones.iter().map(|z| z.phys(z.end_pfn)).max().unwrap_or(0);
        self.pageblock_mt = vec![crate::mmzone::Mt::Movable as u8; ((phys_end >> PAGEBLOCK_ORDER) + 1) as usize];
        let nblocks = (self.fr.len() >> PAGEBLOCK_ORDER) + 1;
        self.pageblock_zone = vec![0; nblocks];
        for z in &self.zones {
            for b in (z.start_pfn >> PAGEBLOCK_ORDER)..=((z.end_pfn.max(1) - 1) >> PAGEBLOCK_ORDER) {
                self.pageblock_zone[b as usize] = z.id as u8;
            }
        }
        for n in 0..self.nodes.len() {
            let mut per = Vec::new();
            for highest in 0..5usize {
                let mut v = Vec::new();
                for k in 0..self.nodes.len() {
                    let nid = (n + k) % self.nodes.len();
                    for &zid in self.nodes[nid].zones.iter().rev() {
                        if self.zones[zid].kind as usize <= highest && self.zones[zid].present > 0 {
                            v.push(zid);
                        }
                    }
                }
                per.push(v);
            }
            self.zonelists.push(per);
        }
        // The engine's state needs the layout, and exists before the first page is freed.
        let ends: Vec<u32> = self.zones.iter().map(|z| z.end_pfn).collect();
        self.reclaim =
            crate::vmscan::EngineState::new(self.profile.engine, &ends, self.nodes.len(), self.cfg.cpus as usize);
        // Firmware/kernel-image reservation comes off the bottom of node 0 (after DMA).
        let reserved = (self.cfg.reserved_bytes / 4096) as u32;
        // Below 16 MiB from 640 KiB up: the ISA hole (never RAM in the e820 map) and, on i386, the
        // kernel image and bootmem bitmap (`reserve_bootmem(HIGH_MEMORY, …)` in setup_memory).
        const LOW_START: u32 = (640 << 10) / 4096;
        let low_end = (LOW_START + (self.cfg.reserved_low_bytes / 4096) as u32).min((16 << 20) / 4096);
        let dma_end = self.zones.iter().filter(|z| z.kind == crate::mmzone::ZoneType::Dma).map(|z| z.end_pfn).max();
        let taken =
            |p: u32| p == 0 || (p < reserved && dma_end.is_none_or(|e| p >= e)) || (LOW_START..low_end).contains(&p);
        let boot: Vec<crate::bootmem::BootZone> = self
            .zones
            .iter()
            .map(|z| crate::bootmem::BootZone {
                kind: z.kind,
                node: z.node,
                start: z.start_pfn,
                end: z.end_pfn,
                phys_start: z.phys_start_pfn,
            })
            .collect();
        let memmap = crate::bootmem::vmemmap_ranges(
            &boot,
            self.profile.memmap_struct_page,
            self.profile.memmap_goal_high,
            taken,
        );
        for zid in 0..self.zones.len() {
            let (s, e) = (self.zones[zid].start_pfn, self.zones[zid].end_pfn);
            let mut p = s;
            while p < e {
                let in_memmap = memmap.iter().any(|&(a, b)| (a..b).contains(&p));
                if in_memmap || taken(p) {
                    self.fr.set(p, pg::RESERVED);
                    self.g.reserved += 1;
                    self.zones[zid].managed -= 1;
                    self.zones[zid].bootmem += in_memmap as u64;
                    p += 1;
                    continue;
                }
                // Largest aligned block that fits before the zone's end or the memmap.
                let lim = memmap.iter().map(|&(a, _)| a).filter(|&a| a > p).min().unwrap_or(e).min(e);
                let mut o = (MAX_ORDER - 1) as u32;
                let idx = self.buddy_idx(zid, p);
                while o > 0 && (!idx.is_multiple_of(1 << o) || p + (1 << o) > lim) {
                    o -= 1;
                }
                self.free_one_page(zid, p, o);
                p += 1 << o;
            }
        }
        self.setup_watermarks();
    }

    /// Sleep in reclaim_throttle, as engines without `reclaim_wait` queues model it: a wakeup
    /// reaches the task only once it sleeps. Returns the timeout; the caller blocks until then
    /// or woken.
    pub fn reclaim_throttle_unqueued(&mut self, ctx: &Ctx) -> u64 {
        if !self.throttled.contains(&ctx.task) {
            self.throttled.push(ctx.task);
        }
        ctx.clock() + crate::vmscan::THROTTLE_NS
    }

    /// Queue the completion, at `t`, of the submission just made to `disk` for `pages`. A
    /// submission the disk merged into the request before it raises no interrupt of its own.
    pub fn queue_io_done(&mut self, t: u64, disk: usize, pages: Vec<Pfn>, write: bool) {
        // Writes an mq-deadline queue held go when it dispatches them (mq_deadline.rs).
        // So do reads a 2.4 queue lists (disk_ll24.rs): they complete when its driver takes them.
        let held = write || t == crate::ll_rw_blk::UNPLUGGED;
        let pages = if held { self.disks[disk].hold_pages(pages) } else { Some(pages) };
        self.collect_dispatched(disk);
        let Some(pages) = pages else { return };
        let irq = !self.disks[disk].last_merged();
        let d = if write { IoDone::Write { pages, disk, irq } } else { IoDone::Read { pages, disk, irq } };
        if write {
            self.io_queue_first_write = self.io_queue_first_write.min(t);
        }
        self.io_queue.push((t, d));
    }

    /// `run_task_queue(&tq_disk)`: one global task queue, so every plugged 2.4 queue goes, and
    /// the writes it held complete from the device's time.
    pub fn run_tq_disk(&mut self, now: u64) {
        for d in 0..self.disks.len() {
            self.disks[d].unplug(now);
            self.collect_dispatched(d);
        }
    }

    /// A task waits on page `p` under writeback whose write a 2.4 queue still lists: the
    /// driver takes the requests up to it, and its completion comes in (`collect_dispatched`).
    pub fn take_listed_page(&mut self, now: u64, p: Pfn) {
        for d in 0..self.disks.len() {
            if self.disks[d].take_listed_page(now, p) {
                self.collect_dispatched(d);
                return;
            }
        }
    }

    /// Completions of the held writes `disk`'s scheduler (or 2.4 plug) has dispatched since
    /// the last call.
    pub fn collect_dispatched(&mut self, disk: usize) {
        let mut out = std::mem::take(&mut self.blk_dispatched);
        self.disks[disk].take_dispatched(&mut out);
        for (t, pages) in out.drain(..) {
            if pages.iter().any(|&p| self.fr.has(p, pg::LAUNDER)) {
                crate::vmscan::launder_dispatched(self, t, &pages);
            }
            self.io_queue_first_write = self.io_queue_first_write.min(t);
            self.io_queue.push((t, IoDone::Write { pages, disk, irq: true }));
        }
        self.disks[disk].take_dispatched_reads(&mut out);
        for (t, pages) in out.drain(..) {
            for &p in &pages {
                self.inflight.insert(p, t);
            }
            let mut i = 0;
            while i < self.listed_read_waiters.len() {
                let (p, task) = self.listed_read_waiters[i];
                if pages.contains(&p) {
                    self.read_wakes.push((t, task));
                    self.listed_read_waiters.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            self.io_queue.push((t, IoDone::Read { pages, disk, irq: true }));
        }
        self.blk_dispatched = out;
    }

    /// `wait_on_page` of a locked page `p`: until its I/O's end as `inflight` has it (`absent`
    /// where it has none), a read a 2.4 queue still lists waiting as [`Kernel::wait_on_read`].
    pub fn wait_on_locked(&mut self, ctx: &Ctx, p: Pfn, absent: u64) -> u64 {
        let until = self.inflight.get(&p).copied().unwrap_or(absent);
        self.wait_on_read(ctx, p, until)
    }

    /// `wait_on_page` of `p`, under I/O until `until`: a read a 2.4 queue still lists has no
    /// end yet ([`crate::ll_rw_blk::UNPLUGGED`]); the task sleeps until the driver takes it
    /// ([`Kernel::collect_dispatched`] wakes it at that request's end). When the task goes on.
    pub fn wait_on_read(&mut self, ctx: &Ctx, p: Pfn, until: u64) -> u64 {
        if until != crate::ll_rw_blk::UNPLUGGED {
            return until;
        }
        match self.inflight.get(&p) {
            Some(&t) if t != crate::ll_rw_blk::UNPLUGGED => t,
            _ => {
                self.listed_read_waiters.push((p, ctx.task));
                until
            }
        }
    }

    /// The unqueued throttle's waker: every SWAP_CLUSTER_MAX pages written wake all waiters.
    pub fn writeback_done_unqueued(&mut self, n: u64) {
        self.wb_done_since_wake += n;
        if self.wb_done_since_wake >= crate::vmscan::SWAP_CLUSTER_MAX && !self.throttled.is_empty() {
            self.wb_done_since_wake = 0;
            let w = std::mem::take(&mut self.throttled);
            self.wakeups.extend(w);
        }
    }

    /// Deliver a completed block I/O.
    pub fn io_complete(&mut self, ctx: &mut Ctx, d: IoDone) {
        match d {
            IoDone::Read { pages, .. } => {
                for p in pages {
                    self.inflight.remove(&p);
                    if self.fr.test_clear(p, pg::LOCKED) {
                        self.fr.set(p, pg::UPTODATE);
                    }
                }
            }
            IoDone::Bounce(pages) => {
                for p in pages {
                    self.g.bounce -= 1;
                    crate::vmscan::free_kernel_page(self, ctx, p);
                }
            }
            IoDone::Write { pages, .. } => {
                for &p in &pages {
                    crate::page_writeback::end_page_writeback(self, ctx, p);
                }
                crate::vmscan::writeback_done(self, &pages);
            }
            IoDone::Release { .. } => crate::ext4_page_io::catch_up(self, self.now),
        }
    }

    /// mmap_sem contention summed over every address space, live or exited.
    pub fn mmap_sem_stats(&self) -> crate::sched_lock::RwSemStats {
        let mut t = self.mmap_sem_retired;
        for m in self.mms.iter().flatten() {
            t.add(&m.mmap_sem.stats);
        }
        t
    }

    #[inline(always)]
    pub fn charge(&mut self, ctx: &mut Ctx, f: KFunc, ns: u64) {
        ctx.sys_ns += ns;
        self.prof.add(f, ns);
    }

    /// Zone of a frame: zones are contiguous frame ranges in id order.
    #[inline]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        let z = self.pageblock_zone[(pfn >> PAGEBLOCK_ORDER) as usize] as usize;
        // A zone boundary inside a pageblock (odd explicit layouts): step to the right zone.
        if pfn < self.zones[z].start_pfn {
            z - 1
        } else if pfn >= self.zones[z].end_pfn {
            z + 1
        } else {
            z
        }
    }

    #[inline]
    pub fn node_of(&self, pfn: Pfn) -> usize {
        self.zones[self.zone_of(pfn)].node
    }

    pub fn total_pages(&self) -> u64 {
        self.fr.len() as u64
    }

    pub fn nr_free_pages(&self) -> u64 {
        (0..self.zones.len()).map(|z| self.zone_free(z)).sum()
    }

    pub fn nr_buddy_free(&self) -> u64 {
        self.zones.iter().map(|z| z.free_pages).sum()
    }

    pub fn nr_lru_pages(&self) -> u64 {
        self.nr_lru_entries() + self.lru_folio_tails
    }

    /// Folios (heads and single pages) on LRU lists.
    fn nr_lru_entries(&self) -> u64 {
        let mut n: u64 = self.reclaim.global_lru_pages();
        n += self.nodes.iter().map(|nd| nd.lruvec.lists.iter().map(|l| l.len).sum::<u64>()).sum::<u64>();
        n += self.zones.iter().map(|z| z.lruvec.lists.iter().map(|l| l.len).sum::<u64>()).sum::<u64>();
        for g in self.memcg.groups.iter().skip(1) {
            n += g.lruvec.iter().map(|v| v.lists.iter().map(|l| l.len).sum::<u64>()).sum::<u64>();
        }
        n
    }

    /// Pages conserved: free (buddy + pcp) + on an LRU + every other use = total. Checked by the
    /// scheduler after each step in debug builds.
    pub fn check_conservation(&self) -> Result<(), String> {
        let free = self.nr_free_pages();
        let lru = self.nr_lru_pages();
        let other = self.g.pagetable
            + self.g.quicklist
            + self.g.slab
            + self.g.reserved
            + self.g.isolated
            + self.g.lru_pvec
            + self.g.kernel_stack
            + self.g.bounce
            + self.g.sock
            + self.g.kmem;
        let sum = free + lru + other;
        if sum != self.total_pages() {
            return Err(format!(
                "pages not conserved: free {free} + lru {lru} + pagetables {} + quicklists {} + slab {} + reserved {} + isolated {} + in LRU-add pagevecs {} + stacks {} + bounce {} + sockets {} + kmem {} = {sum} != total {}",
                self.g.pagetable, self.g.quicklist, self.g.slab, self.g.reserved, self.g.isolated, self.g.lru_pvec, self.g.kernel_stack, self.g.bounce, self.g.sock, self.g.kmem, self.total_pages()
            ));
        }
        Ok(())
    }

    /// Full check against per-frame truth (slow; tests and proptests): every free block is
    /// flagged and on the list its flags say, list lengths match walks, LRU flags match lists.
    pub fn check_frames(&self) -> Result<(), String> {
        for z in &self.zones {
            let mut zfree = 0;
            for o in 0..MAX_ORDER {
                let mut blocks = 0;
                for mt in 0..MIGRATE_TYPES {
                    let l = &z.free_area[o][mt];
                    let v = l.collect(&self.fr);
                    if v.len() as u64 != l.len {
                        return Err(format!(
                            "zone {} order {o} list length {} but {} linked",
                            z.kind.name(),
                            l.len,
                            v.len()
                        ));
                    }
                    for p in v {
                        if !self.fr.has(p, pg::BUDDY) || (self.fr.aux[p as usize] & 0xf) as usize != o {
                            return Err(format!("pfn {p} on order-{o} free list without PG_buddy/order"));
                        }
                        if !z.spans(p) {
                            return Err(format!(
                                "pfn {p} on a free list of zone {} it does not belong to",
                                z.kind.name()
                            ));
                        }
                    }
                    blocks += l.len;
                }
                if blocks != z.nr_free[o] {
                    return Err(format!(
                        "zone {} nr_free[{o}] = {} but {blocks} blocks listed",
                        z.kind.name(),
                        z.nr_free[o]
                    ));
                }
                zfree += blocks << o;
            }
            if zfree != z.free_pages {
                return Err(format!("zone {} free_pages {} but free lists hold {zfree}", z.kind.name(), z.free_pages));
            }
        }
        let mut on_lru = 0u64;
        for p in 0..self.fr.len() as Pfn {
            if self.fr.has(p, pg::LRU) {
                on_lru += 1;
            }
        }
        if on_lru != self.nr_lru_entries() {
            return Err(format!("{on_lru} frames have PG_lru but the lists hold {}", self.nr_lru_entries()));
        }
        self.check_conservation()
    }
}
