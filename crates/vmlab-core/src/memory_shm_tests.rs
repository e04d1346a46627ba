//! A shm segment's page reached through the swap cache stays the segment's page: mapped and
//! unmapped as shm, whoever read it in. Before, swap readahead's anonymous page for a shm slot
//! entered the segment still anonymous, and `do_swap_page` in a shm VMA made the segment's
//! swap-cache page anonymous; every later unmap then took the PTE off `rss_anon` while `rss_shmem`
//! had counted it (rmap_sweep's seed 1 under 2.4.9-phillips and 2.4.23aa2).

use crate::kernel::{Ctx, Kernel};
use crate::machine::MachineConfig;
use crate::mm_types::{pg, Pfn};
use crate::mmap::{do_mmap, pte, vm};
use crate::mmzone::ZoneType;
use crate::workload::syscalls::{MapBacking, MmapArgs};

/// A kernel of the first 2.4 engine (swap-out by page-table walk, which gives shm pages in the
/// swap cache swap PTEs), found by what the engine runs (kreclaimd, which only that engine has)
/// rather than by a row's or an engine's name, with swap, and a process
/// with a 4-page shm segment mapped and written.
fn segment() -> (Kernel, Ctx, u32, u64) {
    let cfg = MachineConfig::of_zones("i386", 1, &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384)]);
    let row =
        crate::profiles::all().into_iter().find(crate::vmscan::has_kreclaimd).expect("a row of the 2.4.0-2.4.9 engine");
    let mut k = Kernel::new(row, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 16 << 20));
    let mut ctx = Ctx::default();
    let mm = k.mm_create(&mut ctx, "db").expect("pgd");
    let a = MmapArgs {
        name: "sga".into(),
        backing: MapBacking::Shm("SGA".into()),
        offset: 0,
        len: Some(4 * 4096),
        fixed: false,
        shared: true,
        write: true,
        locked: false,
    };
    let m = do_mmap(&mut k, &mut ctx, mm, &a).expect("mmap");
    for vpn in m.start..m.end {
        assert_eq!(k.handle_mm_fault(&mut ctx, mm, vpn, true), crate::memory::Fault::Done);
    }
    (k, ctx, mm, m.start)
}

/// `shmem_writepage`'s first half on the page at `vpn`: the segment's index now holds a slot
/// and the page is in the swap cache, still mapped. Returns the page and its slot.
fn to_swap_cache(k: &mut Kernel, ctx: &mut Ctx, mm: u32, vpn: u64) -> (Pfn, u32) {
    let p = pte::pfn(k.pte_get(mm, vpn));
    assert!(crate::vmscan::shmem_move_to_swapcache(k, ctx, p));
    (p, crate::swap_state::page_swap_slot(k, p).expect("in the swap cache"))
}

fn shm_flags() -> u32 {
    vm::SHM | vm::SHARED | vm::READ | vm::WRITE
}

/// The mm's counts after every page of the segment is unmapped again: nothing left over.
fn unmap_all_and_check(k: &mut Kernel, ctx: &mut Ctx, mm: u32, start: u64) {
    k.check_rmap().expect("consistent while mapped");
    k.do_munmap(ctx, mm, start, 4);
    k.check_rmap().expect("consistent after munmap");
    let m = k.mm(mm);
    assert_eq!((m.rss_anon, m.rss_file, m.rss_shmem), (0, 0, 0));
}

/// 2.4's walk gives a swap-cache shm page a swap PTE; the fault on it maps the segment's page.
#[test]
fn a_swap_pte_in_a_shm_mapping_maps_the_segments_page() {
    let (mut k, mut ctx, mm, start) = segment();
    let (p, s) = to_swap_cache(&mut k, &mut ctx, mm, start);
    let slot = k.pte_slot(mm, start).expect("table");
    crate::swap_state::swap_duplicate(&mut k, s);
    k.unmap_pte(mm, shm_flags(), slot, p, s + 1);
    let anon = k.g.anon;
    assert_eq!(k.handle_mm_fault(&mut ctx, mm, start, false), crate::memory::Fault::Done);
    let e = k.pte_get(mm, start);
    assert_eq!(pte::pfn(e), p);
    assert!(e & pte::WRITE != 0, "a shared writable mapping's PTE is writable (vm_page_prot)");
    assert!(!k.fr.has(p, pg::ANON), "still the segment's page");
    assert_eq!(k.g.anon, anon);
    assert_eq!(k.mm(mm).rss_shmem, 4);
    unmap_all_and_check(&mut k, &mut ctx, mm, start);
}

/// Swap readahead reads a shm slot as an anonymous page; shm takes it back as its own.
#[test]
fn a_shm_slot_read_by_swap_readahead_enters_the_segment_as_shm() {
    let (mut k, mut ctx, mm, start) = segment();
    let (p, s) = to_swap_cache(&mut k, &mut ctx, mm, start);
    // Written and reclaimed: the PTE goes, then the page.
    let slot = k.pte_slot(mm, start).expect("table");
    k.unmap_pte(mm, shm_flags(), slot, p, 0);
    crate::swap_state::delete_from_swap_cache(&mut k, p);
    crate::vmscan::del_page_from_lru(&mut k, p);
    k.free_pages(&mut ctx, p, 0);
    // Readahead around another process's fault reads the slot for that process.
    let anon = k.g.anon;
    let (q, _) = crate::swap_state::swapin(&mut k, &mut ctx, s, 0, 0).expect("a page");
    assert!(k.fr.has(q, pg::ANON));
    k.fr.clear(q, pg::LOCKED);
    k.inflight.remove(&q);
    assert_eq!(k.handle_mm_fault(&mut ctx, mm, start, true), crate::memory::Fault::Done);
    assert_eq!(pte::pfn(k.pte_get(mm, start)), q);
    assert!(!k.fr.has(q, pg::ANON), "the segment's page now");
    assert_eq!(k.g.anon, anon, "not counted as anonymous memory");
    unmap_all_and_check(&mut k, &mut ctx, mm, start);
}
