//! The machine: memory layout into nodes and zones, CPUs, and the cost table that turns kernel
//! work into simulated CPU time.

use crate::mmzone::ZoneType;

pub const PAGE_SIZE: u64 = 4096;
pub const PAGE_SHIFT: u32 = 12;

/// One zone's extent before the allocator is built.
#[derive(Clone, Debug)]
pub struct ZoneLayout {
    pub kind: ZoneType,
    pub node: usize,
    pub pages: u64,
    /// Where the memory map puts the zone (its `zone_start_pfn`); None: where the architecture
    /// does (`MachineConfig::zone_start_pfns`).
    pub start_pfn: Option<u64>,
}

/// MAX_ORDER_NR_PAGES: zone and node boundaries of the memory maps vmlab builds fall on it.
const MAX_ORDER_NR_PAGES: u64 = 1 << (crate::mmzone::MAX_ORDER - 1);

#[derive(Clone, Debug)]
pub struct MachineConfig {
    pub memory_bytes: u64,
    pub cpus: u32,
    pub nodes: u32,
    pub arch: String,
    pub cpu_mhz: u32,
    pub reserved_bytes: u64,
    /// Reserved from 640 KiB up, inside the first 16 MiB (ISA hole, i386 kernel image at 1 MiB).
    pub reserved_low_bytes: u64,
    pub zones: Vec<ZoneLayout>,
}

impl MachineConfig {
    /// One node of these zones (kind, pages) on `cpus` CPUs at 3 GHz, nothing reserved: the
    /// unit tests' small machines, whose zone sizes are what the test is about.
    #[cfg(test)]
    pub(crate) fn of_zones(arch: &str, cpus: u32, zones: &[(ZoneType, u64)]) -> MachineConfig {
        MachineConfig {
            memory_bytes: zones.iter().map(|&(_, pages)| pages).sum::<u64>() * 4096,
            cpus,
            nodes: 1,
            arch: arch.into(),
            cpu_mhz: 3000,
            reserved_bytes: 0,
            reserved_low_bytes: 0,
            zones: zones.iter().map(|&(kind, pages)| ZoneLayout { kind, node: 0, pages, start_pfn: None }).collect(),
        }
    }

    /// Lay memory out as the architecture does: x86_64 node 0 gets DMA (16 MiB) and DMA32 (to
    /// 4 GiB), everything else is Normal; i386 gets DMA, Normal up to 896 MiB and HighMem.
    pub fn layout(memory_bytes: u64, nodes: u32, arch: &str) -> Result<Vec<ZoneLayout>, String> {
        let total = memory_bytes / PAGE_SIZE;
        if nodes == 0 {
            return Err("machine.nodes must be at least 1".into());
        }
        let per_node = total / nodes as u64;
        if per_node < 4096 {
            return Err(format!(
                "machine.memory gives {} pages per node; at least 16 MiB per node is needed",
                per_node
            ));
        }
        let mib = 256; // pages per MiB
        let mut z = Vec::new();
        for n in 0..nodes as usize {
            let pages = if n + 1 == nodes as usize { total - per_node * (nodes as u64 - 1) } else { per_node };
            // Physical address where this node starts, in pages.
            let base = per_node * n as u64;
            let mut rest = pages;
            let mut addr = base;
            let mut push = |kind, cnt: u64, rest: &mut u64, addr: &mut u64| {
                if cnt > 0 {
                    z.push(ZoneLayout { kind, node: n, pages: cnt, start_pfn: None });
                    *rest -= cnt;
                    *addr += cnt;
                }
            };
            match arch {
                "x86_64" => {
                    let dma = if addr < 16 * mib { (16 * mib - addr).min(rest) } else { 0 };
                    push(ZoneType::Dma, dma, &mut rest, &mut addr);
                    let four_g = 4096 * mib;
                    let dma32 = if addr < four_g { (four_g - addr).min(rest) } else { 0 };
                    push(ZoneType::Dma32, dma32, &mut rest, &mut addr);
                    let r = rest;
                    push(ZoneType::Normal, r, &mut rest, &mut addr);
                }
                "i386" => {
                    let dma = if addr < 16 * mib { (16 * mib - addr).min(rest) } else { 0 };
                    push(ZoneType::Dma, dma, &mut rest, &mut addr);
                    let lim = 896 * mib;
                    let normal = if addr < lim { (lim - addr).min(rest) } else { 0 };
                    push(ZoneType::Normal, normal, &mut rest, &mut addr);
                    let r = rest;
                    push(ZoneType::HighMem, r, &mut rest, &mut addr);
                }
                other => return Err(format!("machine.arch `{other}` is not known; expected `x86_64` or `i386`")),
            }
        }
        Ok(z)
    }
    pub fn total_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.pages).sum()
    }

    /// The bytes a process may map (`TASK_SIZE`): x86-64's `TASK_SIZE_MAX` (128 TiB less a
    /// page, 4-level tables); `get_unmapped_area` fails a longer mmap with -ENOMEM. Not yet
    /// i386's 3 GiB: seed 002's scenario maps its 4.25 GiB context store as one region of one
    /// process, which a 32-bit process could not (recorded in the reliability log).
    pub fn task_size(&self) -> u64 {
        (1 << 47) - 4096
    }

    /// Each zone's first pfn on the machine's memory map (`zone_start_pfn`). vmlab's frames are
    /// packed, zone after zone; the physical map has holes: on x86-64 DMA32 starts at 16 MiB
    /// and Normal at 4 GiB (`MAX_DMA32_PFN`, the PCI hole below it), on i386 Normal at 16 MiB
    /// and HighMem at 896 MiB; other boundaries on MAX_ORDER_NR_PAGES. The buddy allocator and
    /// the pageblocks count on these (`page_alloc.rs`), so a zone's blocks align as the kernel's
    /// do, while no frame exists for the hole.
    pub fn zone_start_pfns(&self) -> Vec<u64> {
        let floor = |kind: ZoneType| -> u64 {
            match (self.arch.as_str(), kind) {
                ("x86_64", ZoneType::Dma32) => 16 << 8,
                ("x86_64", ZoneType::Normal) => 4096 << 8,
                ("i386", ZoneType::Normal) => 16 << 8,
                ("i386", ZoneType::HighMem) => 896 << 8,
                _ => 0,
            }
        };
        let mut at = 0u64;
        self.zones
            .iter()
            .map(|z| {
                let start = z.start_pfn.unwrap_or_else(|| at.max(floor(z.kind)).next_multiple_of(MAX_ORDER_NR_PAGES));
                at = start + z.pages;
                start
            })
            .collect()
    }
    pub fn cpus_of_node(&self, node: u32) -> Vec<u32> {
        let per = (self.cpus / self.nodes).max(1);
        (0..self.cpus).filter(|c| (c / per).min(self.nodes - 1) == node).collect()
    }
    /// The CPU of `node` that a draw `r` picks, `cpus_of_node(node)[r % len]` (CPU 0 when the
    /// node has none) without building the list: an interrupt picks one per packet.
    pub fn pick_cpu_of_node(&self, node: u32, r: u32) -> u32 {
        let per = (self.cpus / self.nodes).max(1);
        let first = node.saturating_mul(per);
        let end = if node + 1 >= self.nodes { self.cpus } else { first.saturating_add(per).min(self.cpus) };
        if node >= self.nodes || first >= end {
            return 0;
        }
        first + (r as usize % (end - first) as usize) as u32
    }
    pub fn node_of_cpu(&self, cpu: u32) -> usize {
        let per = (self.cpus / self.nodes).max(1);
        ((cpu / per).min(self.nodes - 1)) as usize
    }
}

/// Simulated CPU time of kernel work, in nanoseconds at 3 GHz; scaled by 3000/cpu_mhz.
/// Figures are of the order measured on real hardware (clear_page ~10 GB/s, a minor fault ~1 µs).
#[derive(Clone, Debug)]
pub struct CostTable {
    pub fault: u64,
    pub clear_page: u64,
    pub copy_page: u64,
    pub copy_user_page: u64,
    pub syscall: u64,
    pub lru_scan: u64,
    pub rmap_one: u64,
    pub pte_walk: u64,
    pub page_alloc: u64,
    pub page_free: u64,
    pub pagecache_add: u64,
    pub context_switch: u64,
    pub io_submit: u64,
    /// CPU of one readahead request of the page-cache read path beyond `io_submit`, spent before
    /// the device sees it (6.8's `read_pages` builds the batch's bios, then the plug submits
    /// them). 0 in vmlab's own table; `scripts/calibrate-costs.sh` fits it to a host whose file
    /// reads cost more per request than its swap or writeback I/O.
    pub read_pages: u64,
    /// CPU of one folio a `read()`'s readahead batch brings in, beyond `pagecache_add`: 6.8
    /// does this work once per folio whatever its size — `ra_alloc_folio`'s allocation and
    /// `filemap_add_folio` (xarray store, memcg charge, LRU batch), the file system's
    /// `readahead_folio` loop adding it to a bio (ext4's `ext4_mpage_readpages`: the extent check, `bio_add_folio`), and at
    /// completion `folio_end_read` and the reader's batched lookup, wait and `folio_put`. So a
    /// small file read in small folios pays it per page, a large sequential read once per large
    /// folio. 0 in vmlab's own table; `scripts/calibrate-costs.sh` fits it to a host.
    pub readahead_folio: u64,
    /// CPU of one folio the fault path's read-around brings in, beyond `pagecache_add`: the
    /// same insertion and bio building as `readahead_folio`'s (6.8 `do_sync_mmap_readahead` →
    /// `page_cache_ra_order` / `page_cache_ra_unbounded` → `read_pages`), but no `read()` then
    /// looks the folio up, waits for it and drops it — a read-around window is 2,048 pages of
    /// which the fault maps one. 0 in vmlab's own table; `scripts/calibrate-costs.sh` fits it
    /// from `scenarios/calibrate/read-around.toml`.
    pub readaround_folio: u64,
    /// CPU of one clean page-cache folio reclaim frees, beyond the LRU scan and the free:
    /// 6.8's `__remove_mapping` (mm/vmscan.c) under `xa_lock_irq` (`workingset_eviction`'s
    /// shadow, `__filemap_remove_folio`'s xarray store and page-cache statistics), the memcg
    /// uncharge, and the LRU lock's isolation and putback of the batch it came in. Per folio,
    /// so reclaim of small folios pays it per page. 0 in vmlab's own table;
    /// `scripts/calibrate-costs.sh` fits it from `scenarios/calibrate/reclaim-around.toml`.
    pub remove_mapping: u64,
    /// CPU of one reclaim pass over a node beyond its folios: what 6.8's `shrink_node`
    /// (mm/vmscan.c) does once however few folios it frees — `prepare_scan_control`'s memcg
    /// statistics flush and balance reads, `shrink_node_memcgs`' `mem_cgroup_iter` walk with
    /// `mem_cgroup_calculate_protection`, `shrink_lruvec`'s `get_scan_count` and plug,
    /// `lru_add_drain` before isolating, `shrink_slab` over the group's shrinkers, `vmpressure`
    /// for the group and the subtree — and what its caller `try_to_free_mem_cgroup_pages` and
    /// `try_charge_memcg` add around one pass (the reclaim state, `psi_memstall_enter`/`leave`,
    /// `snapshot_refaults`). A limit reclaim that frees one large folio pays it once for 512
    /// pages. 0 in vmlab's own table; fitted to a host from traced limit-reclaim calls
    /// (docs/REAL.md, limit29).
    pub shrink_node: u64,
    /// CPU of one open of a named file beyond the system-call entry: 6.8's `path_openat` (the
    /// name's lookup in the dcache, the permission check, the `struct file`'s allocation) and
    /// what goes with it in one `read`/`write` of a file — `fstat`, the read call's setup and
    /// close's `__fput`. 0 in vmlab's own table; `scripts/calibrate-costs.sh` fits it to a host
    /// from `scenarios/calibrate/open-cached.toml`.
    pub path_openat: u64,
    /// CPU of one page of a buffered `write()` beyond `copy_user_page`: 6.8's
    /// `generic_perform_write` takes the page with the file system's `write_begin` (ext4: its
    /// buffer heads and the delayed-allocation reservation), copies into it with
    /// `copy_page_from_iter_atomic` — into a page just allocated, so cold, where a read copies
    /// out of one into a buffer the task keeps reusing — and ends with `write_end`. 0 in vmlab's
    /// own table; `scripts/calibrate-costs.sh` fits it to a host from
    /// `scenarios/calibrate/write-cached.toml`.
    pub perform_write: u64,
    /// CPU of one folio a buffered `write()` adds to the page cache, beyond the allocation,
    /// memcg charge, insertion and copy charged apart: what 6.8 does once per folio that
    /// `write_begin` creates and `write_end` dirties for the first time — ext4's
    /// `ext4_block_write_begin` giving it buffer heads (`create_empty_buffers`) and reserving
    /// its delayed block (`ext4_da_get_block_prep`), and `block_commit_write` marking the buffer
    /// and the folio dirty (`mark_buffer_dirty` → `__folio_mark_dirty`: the xarray's dirty tag
    /// under `xa_lock_irqsave`, the node, memcg and wb dirty counters). A write over a folio
    /// already dirty pays none of it, which is why `perform_write` (every page) is not
    /// determined on the development host and this is. Per folio, so on a file system with
    /// large folios a 1 MiB write pays it a few times, on a 4 KiB-folio one 256 times. 0 in
    /// vmlab's own table; `scripts/calibrate-costs.sh` fits it from
    /// `scenarios/calibrate/write-new.toml`, run on a 4 KiB-folio file system.
    pub write_new_folio: u64,
    /// CPU of one swap-in fault beyond the fault's entry and the allocation, read and rmap
    /// charged apart: 6.8's `do_swap_page` (mm/memory.c) looks the entry up in the swap cache,
    /// locks the folio, re-takes the PTE lock to check the entry is unchanged, frees the swap
    /// slot (`swap_free`, `folio_free_swap` when the cache copy can go), charges or re-charges the
    /// memcg (`mem_cgroup_swapin_charge_folio`), adds the anon rmap and installs the PTE. Charged
    /// once per swap-in fault, whether the page was still in the swap cache or had to be read. 0
    /// in vmlab's own table; `scripts/calibrate-costs.sh` can fit it from the `swap` probe's
    /// system time, beside `rmap_one` from its memory stall, on a host whose swap-ins cost more
    /// than vmlab's generic fault (a virtual machine whose page-table updates trap, for one).
    pub do_swap_page: u64,
    /// CPU of the first touch of a frame the guest had reported free to its hypervisor
    /// (page_reporting.rs), beyond the touch's own cost: the hypervisor faults the discarded
    /// memory back in on the touching instruction. Charged once a frame, at the copy to user
    /// of a page-cache page, a `write()`'s copy, a page's clearing or a COW copy; never at DMA.
    /// 0 in vmlab's own table; a host table sets it only from a measurement (docs/REAL.md,
    /// sys31's probe: ~6.5 µs a page on a Firecracker guest).
    pub reported_touch: u64,
    pub mmap: u64,
    pub mlock_page: u64,
    pub lock_handoff: u64,
    /// Cost of one spin iteration on a contended spinlock (cache line bounce).
    pub spin: u64,
    /// One block-completion interrupt of a 2.6+ kernel: the driver's hard handler and the block
    /// softirq ending the request's bios (`IrqRule::Fixed`).
    pub irq_handler: u64,
    /// CPU of one page whose write ends, in the completion's handler beyond `irq_handler`:
    /// 6.8's `folio_end_writeback` (mm/filemap.c) does this per folio — PG_writeback and the
    /// mapping's writeback tag cleared under `xa_lock_irqsave`, the writeback counters, and for
    /// a page reclaim marked `folio_rotate_reclaimable`'s move to the inactive tail under the
    /// LRU lock — where `irq_handler` is per request. Its time is taken from whatever the CPU
    /// was running, a writer included. 0 in vmlab's own table (`IrqRule::Fixed` only).
    pub end_writeback: u64,
    /// One block-completion interrupt of a 2.4 kernel, bounce copies apart: the driver's handler
    /// ends every buffer of the request and runs the request function, with interrupts off
    /// (`IrqRule::LowestPriority24`).
    pub irq_end_request: u64,
}

impl CostTable {
    pub fn for_mhz(mhz: u32) -> CostTable {
        let s = |ns: u64| (ns * 3000 / mhz.max(1) as u64).max(1);
        CostTable {
            fault: s(700),
            clear_page: s(300),
            copy_page: s(450),
            copy_user_page: s(400),
            syscall: s(150),
            lru_scan: s(60),
            rmap_one: s(90),
            pte_walk: s(6),
            page_alloc: s(60),
            page_free: s(50),
            pagecache_add: s(200),
            context_switch: s(1500),
            io_submit: s(2500),
            read_pages: 0,
            readahead_folio: 0,
            readaround_folio: 0,
            remove_mapping: 0,
            shrink_node: 0,
            path_openat: 0,
            perform_write: 0,
            write_new_folio: 0,
            do_swap_page: 0,
            reported_touch: 0,
            mmap: s(2500),
            mlock_page: s(60),
            lock_handoff: s(800),
            spin: s(100),
            // blk-mq completes a request in about a µs of CPU on a 3 GHz core (hard handler,
            // BLOCK_SOFTIRQ, bio_endio, a folio unlock per page).
            irq_handler: s(1500),
            end_writeback: 0,
            // The only measurement at hand is seed 000's DAC960 handler on a 1 GHz PIII (about
            // 90 µs a request once its bounce copies are taken out), scaled to 3 GHz.
            irq_end_request: s(30_000),
        }
    }
}

impl CostTable {
    /// The entries a scenario may override (`[machine.cost]`), by field name.
    pub const NAMES: &'static [&'static str] = &[
        "fault",
        "clear_page",
        "copy_page",
        "copy_user_page",
        "syscall",
        "lru_scan",
        "rmap_one",
        "pte_walk",
        "page_alloc",
        "page_free",
        "pagecache_add",
        "context_switch",
        "io_submit",
        "read_pages",
        "readahead_folio",
        "readaround_folio",
        "remove_mapping",
        "shrink_node",
        "path_openat",
        "perform_write",
        "write_new_folio",
        "do_swap_page",
        "reported_touch",
        "mmap",
        "mlock_page",
        "lock_handoff",
        "spin",
        "irq_handler",
        "end_writeback",
        "irq_end_request",
    ];

    /// The entry called `name` (one of [`CostTable::NAMES`]).
    pub fn entry_mut(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "fault" => &mut self.fault,
            "clear_page" => &mut self.clear_page,
            "copy_page" => &mut self.copy_page,
            "copy_user_page" => &mut self.copy_user_page,
            "syscall" => &mut self.syscall,
            "lru_scan" => &mut self.lru_scan,
            "rmap_one" => &mut self.rmap_one,
            "pte_walk" => &mut self.pte_walk,
            "page_alloc" => &mut self.page_alloc,
            "page_free" => &mut self.page_free,
            "pagecache_add" => &mut self.pagecache_add,
            "context_switch" => &mut self.context_switch,
            "io_submit" => &mut self.io_submit,
            "read_pages" => &mut self.read_pages,
            "readahead_folio" => &mut self.readahead_folio,
            "readaround_folio" => &mut self.readaround_folio,
            "remove_mapping" => &mut self.remove_mapping,
            "shrink_node" => &mut self.shrink_node,
            "path_openat" => &mut self.path_openat,
            "perform_write" => &mut self.perform_write,
            "write_new_folio" => &mut self.write_new_folio,
            "do_swap_page" => &mut self.do_swap_page,
            "reported_touch" => &mut self.reported_touch,
            "mmap" => &mut self.mmap,
            "mlock_page" => &mut self.mlock_page,
            "lock_handoff" => &mut self.lock_handoff,
            "spin" => &mut self.spin,
            "irq_handler" => &mut self.irq_handler,
            "end_writeback" => &mut self.end_writeback,
            "irq_end_request" => &mut self.irq_end_request,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_cpu_of_node_is_an_entry_of_cpus_of_node() {
        for cpus in 1..=9u32 {
            for nodes in 1..=4u32 {
                let cfg = MachineConfig {
                    memory_bytes: 0,
                    cpus,
                    nodes,
                    arch: String::new(),
                    cpu_mhz: 1000,
                    reserved_bytes: 0,
                    reserved_low_bytes: 0,
                    zones: Vec::new(),
                };
                for node in 0..nodes + 1 {
                    let list = cfg.cpus_of_node(node);
                    for r in [0u32, 1, 2, 3, 7, 1 << 31, u32::MAX] {
                        let want = list.get(r as usize % list.len().max(1)).copied().unwrap_or(0);
                        assert_eq!(cfg.pick_cpu_of_node(node, r), want, "{cpus} cpus {nodes} nodes node {node} r {r}");
                    }
                }
            }
        }
    }
    #[test]
    fn every_cost_name_has_an_entry() {
        let mut c = CostTable::for_mhz(1000);
        for name in CostTable::NAMES {
            let e = c.entry_mut(name).unwrap_or_else(|| panic!("no entry for {name}"));
            *e = 7;
        }
        assert_eq!((c.lru_scan, c.spin, c.fault), (7, 7, 7));
        assert!(c.entry_mut("lru_scans").is_none());
    }
    #[test]
    fn x86_64_layout_has_dma_dma32_normal() {
        let z = MachineConfig::layout(8 << 30, 2, "x86_64").unwrap();
        let kinds: Vec<_> = z.iter().map(|z| (z.kind, z.node)).collect();
        assert_eq!(kinds, vec![(ZoneType::Dma, 0), (ZoneType::Dma32, 0), (ZoneType::Normal, 1)]);
        assert_eq!(z.iter().map(|z| z.pages).sum::<u64>(), (8u64 << 30) / 4096);
    }
    #[test]
    fn i386_layout_has_highmem() {
        let z = MachineConfig::layout(2 << 30, 1, "i386").unwrap();
        assert_eq!(z[1].kind, ZoneType::Normal);
        assert_eq!(z[1].pages, 880 * 256);
        assert_eq!(z[2].kind, ZoneType::HighMem);
    }
}
