//! mlock in small chunks (`mlock NAME chunk=4K`): each call splits the VMA at its ends, and
//! mlock_fixup's vma_merge joins the locked piece back to its locked neighbour, as the kernel's
//! does, so a region locked page by page is one VMA again — not one per page, which made every
//! later split and lookup pay for all of them (quadratic: 53 s of wall time per simulated second).

use vmlab_core::api::{self, RunOpts};

fn vmas_after(program: &str) -> Vec<usize> {
    let text = format!(
        "duration = \"2s\"\n[machine]\nmemory = \"256MiB\"\ncpus = 1\n[[process]]\nname = \"p\"\nprogram = '''\n{program}\nsleep forever\n'''\n"
    );
    let sc = vmlab_core::workload::load_scenario_str("mlock-chunks.toml", &text, &[]).expect("loads");
    let (_, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim.s.tasks.iter().filter(|t| t.prog.is_some()).filter_map(|t| t.mm).map(|mm| sim.k.mm(mm).vmas.len()).collect()
}

#[test]
fn a_region_locked_page_by_page_is_one_vma() {
    assert_eq!(vmas_after("mmap a anon 16MiB\nmlock a chunk=4K"), vec![1]);
    // Unlocked page by page, it is one again; half locked, two.
    assert_eq!(vmas_after("mmap a anon 8MiB\nmlock a chunk=4K\nmunlock a"), vec![1]);
    assert_eq!(vmas_after("mmap a anon 8MiB\nmlock a len=4MiB chunk=4K"), vec![2]);
}

#[test]
fn the_same_name_mapped_again_and_locked_in_pages_stays_small() {
    // Each mmap of `a` is a new mapping; the old ones stay mapped (nobody unmapped them).
    let counts = vmas_after("repeat 20 {\n  mmap a anon 4MiB\n  mlock a chunk=4K\n}");
    assert_eq!(counts.len(), 1);
    assert!(counts[0] <= 20, "{} VMAs for 20 mappings", counts[0]);
}
