//! `unmap_and_move` on the three kinds of page compaction meets: a mapped anonymous page, a
//! mapped page-cache page, a swap-cache page no PTE maps. Each must be found at its new frame
//! by every lookup the kernel has, and nothing may be lost or counted twice.

use super::*;
use crate::machine::MachineConfig;
use crate::mmap::do_mmap;
use crate::mmzone::ZoneType;
use crate::page_alloc::Gfp;
use crate::workload::syscalls::{MapBacking, MmapArgs};

struct Setup {
    k: Kernel,
    ctx: Ctx,
    mm: u32,
    anon: u64,
    file_vma: u64,
    file: u32,
}

/// A kernel of a row with compaction (found by that, not by name), swap, and a process with
/// 8 written anonymous pages and a read-mapped page-cache page.
fn setup() -> Setup {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
    let row = crate::profiles::all().into_iter().find(crate::vmscan::has_compaction).expect("a row with compaction");
    let mut k = Kernel::new(row, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 16 << 20));
    let mut ctx = Ctx::default();
    let mm = k.mm_create(&mut ctx, "p").expect("pgd");
    let m = do_mmap(&mut k, &mut ctx, mm, &MmapArgs::anon("a", 8 * 4096, false)).expect("mmap");
    for vpn in m.start..m.end {
        assert_eq!(k.handle_mm_fault(&mut ctx, mm, vpn, true), crate::memory::Fault::Done);
    }
    let file = k.file_create("f", 4 * 4096, 0, false);
    let p = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page");
    k.add_to_page_cache(&mut ctx, file, 0, p);
    k.fr.set(p, pg::UPTODATE);
    let a = MmapArgs {
        name: "fm".into(),
        backing: MapBacking::File("f".into()),
        offset: 0,
        len: Some(4096),
        fixed: false,
        shared: false,
        write: false,
        locked: false,
    };
    let fm = do_mmap(&mut k, &mut ctx, mm, &a).expect("mmap file");
    assert_eq!(k.handle_mm_fault(&mut ctx, mm, fm.start, false), crate::memory::Fault::Done);
    assert_eq!(pte::pfn(k.pte_get(mm, fm.start)), p, "the fault mapped the cached page");
    k.check_rmap().expect("consistent before");
    // As `compact_zone`'s `migrate_prep_local` leaves them: this CPU's new pages on their lists.
    crate::vmscan::lru_add_drain(&mut k, &ctx);
    Setup { k, ctx, mm, anon: m.start, file_vma: fm.start, file }
}

/// Counts that migration must leave as they were.
fn counts(k: &Kernel) -> (u64, u64, u64, u64, u64, [u64; 5], u64) {
    let lru = k.zones[0].lru_pages;
    (k.nr_free_pages(), k.g.anon, k.g.file, k.g.mapped + k.g.anon_mapped, k.g.swapcache, lru, k.g.isolated)
}

/// Isolate `old`, take a free frame, move; returns the new frame.
fn migrate(s: &mut Setup, old: Pfn) -> Pfn {
    let before = counts(&s.k);
    let list = s.k.fr.lru_list(old);
    assert!(isolatable(&s.k, old));
    isolate(&mut s.k, old);
    let new = s.k.alloc_pages(&mut s.ctx, Gfp::highuser_movable(), 0).expect("target");
    unmap_and_move(&mut s.k, &mut s.ctx, old, new).expect("moves");
    assert_ne!(new, old);
    assert_eq!(counts(&s.k), before, "pages and counts conserved");
    assert!(unreferenced(&s.k, old), "nothing points at the old frame");
    assert!(s.k.fr.has(old, pg::PCP) || s.k.fr.has(old, pg::BUDDY), "the old frame is free");
    assert_eq!(s.k.fr.lru_list(new), list, "the page is back on its own list");
    s.k.check_rmap().expect("rmap consistent after");
    new
}

#[test]
fn a_mapped_anonymous_page_moves_and_its_pte_follows() {
    let mut s = setup();
    let vpn = s.anon + 3;
    let old = pte::pfn(s.k.pte_get(s.mm, vpn));
    let was_dirty_pte = s.k.pte_get(s.mm, vpn) & pte::DIRTY != 0;
    let new = migrate(&mut s, old);
    let e = s.k.pte_get(s.mm, vpn);
    assert_eq!(pte::pfn(e), new);
    assert!(e & pte::WRITE != 0 && e & pte::YOUNG == 0, "writable still, and old (pte_mkold)");
    assert!(s.k.fr.has(new, pg::ANON) && s.k.fr.mapcount[new as usize] == 1);
    assert_eq!(s.k.fr.has(new, pg::DIRTY), was_dirty_pte || s.k.fr.has(new, pg::DIRTY));
    // The page is the process's: a write fault on it finds it mapped.
    assert_eq!(s.k.handle_mm_fault(&mut s.ctx, s.mm, vpn, true), crate::memory::Fault::Done);
    assert_eq!(pte::pfn(s.k.pte_get(s.mm, vpn)), new);
}

#[test]
fn a_mapped_page_cache_page_moves_and_the_cache_finds_it() {
    let mut s = setup();
    let old = s.k.files[s.file as usize].find(0).expect("cached");
    let new = migrate(&mut s, old);
    assert_eq!(s.k.files[s.file as usize].find(0), Some(new));
    assert_eq!(pte::pfn(s.k.pte_get(s.mm, s.file_vma)), new);
    assert_eq!((s.k.fr.mapping[new as usize], s.k.fr.index[new as usize]), (s.file, 0));
}

#[test]
fn a_swap_cache_page_moves_and_the_swap_fault_maps_the_new_frame() {
    let mut s = setup();
    let vpn = s.anon + 5;
    let p = pte::pfn(s.k.pte_get(s.mm, vpn));
    assert!(crate::swap_state::add_to_swap(&mut s.k, &mut s.ctx, p));
    assert!(s.k.try_to_unmap(&mut s.ctx, p), "unmapped: only the swap cache holds it");
    let slot = crate::swap_state::page_swap_slot(&s.k, p).expect("slot");
    let new = migrate(&mut s, p);
    assert_eq!(crate::swap_state::page_swap_slot(&s.k, new), Some(slot));
    assert_eq!(s.k.swap.as_ref().expect("swap").cache[slot as usize], new);
    assert!(s.k.fr.has(new, pg::SWAPCACHE) && !s.k.fr.has(p, pg::SWAPCACHE));
    assert_eq!(s.k.handle_mm_fault(&mut s.ctx, s.mm, vpn, false), crate::memory::Fault::Done);
    assert_eq!(pte::pfn(s.k.pte_get(s.mm, vpn)), new, "do_swap_page found it in the swap cache");
    s.k.check_rmap().expect("rmap after the fault");
}

#[test]
fn busy_pages_stay_where_they_are() {
    let mut s = setup();
    let p = pte::pfn(s.k.pte_get(s.mm, s.anon));
    for (flag, why) in [(pg::LOCKED, Busy::Locked), (pg::WRITEBACK, Busy::Writeback)] {
        s.k.fr.set(p, flag);
        assert_eq!(can_move(&s.k, p), Err(why));
        s.k.fr.clear(p, flag);
    }
    // A pin is an extra reference where `extra` counts them (rows without memcg).
    s.k.profile.memcg = false;
    s.k.fr.extra[p as usize] = 1;
    assert_eq!(can_move(&s.k, p), Err(Busy::Pinned));
    s.k.fr.extra[p as usize] = 0;
    assert_eq!(can_move(&s.k, p), Ok(()));
    // Unevictable (mlocked) pages are not isolated at all.
    s.k.fr.set(p, pg::UNEVICTABLE);
    assert!(!isolatable(&s.k, p));
}
