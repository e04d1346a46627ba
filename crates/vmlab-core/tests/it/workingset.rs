//! Workingset refaults as 6.8 has them (mm/workingset.c): a refault within the workingset size
//! activates the page, and only a page that was on an active list before its eviction (the
//! shadow's PG_workingset bit) is restored; and the unevictable LRU's counters, one per page
//! as 6.8 counts them.

use vmlab_core::stats::report::RunReport;

fn run(text: &str, sets: &[&str]) -> RunReport {
    crate::common::run_checked("workingset.toml", text, sets)
}

/// A hot heap beside a file set that does not fit next to it in the group, read `passes` times
/// (issue 17's case, scaled down). With swap, all of anon counts in a file refault's
/// workingset size, so the refaults of each pass activate.
const FILESET: &str = r#"
profile = "linux-6.8"

[machine]
memory = "512MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "256MiB"

[vars]
passes = 2

[[file]]
name = "set"
size = "36MiB"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "heap"
cgroup = "job"
program = '''
mmap heap anon 40MiB
touch heap write
repeat 100 {
    touch heap read
    sleep 100ms
}
'''

[[process]]
name = "reader"
cgroup = "job"
start = "1s"
program = '''
repeat passes {
    read set bs=1MiB
}
'''
"#;

#[test]
fn only_pages_that_were_active_before_eviction_are_restored() {
    let two = run(FILESET, &[]);
    let refault = two.counter("workingset_refault_file");
    let activate = two.counter("workingset_activate_file");
    assert!(refault > 1000, "the second pass refaults the set: {refault}");
    assert!(activate > refault / 2, "most refaults are within the workingset: {activate} of {refault}");
    // Pass 1's pages were read once, never active: their shadows have no workingset bit.
    assert_eq!(two.counter("workingset_restore_file"), 0);

    let three = run(FILESET, &["vars.passes=3"]);
    let restore = three.counter("workingset_restore_file");
    // Pass 2's activated pages are deactivated (PG_workingset) before they go; pass 3 restores
    // them, and nothing else.
    assert!(restore > activate / 2, "pass 3 restores what pass 2 activated: {restore} vs {activate}");
    assert!(restore <= activate, "no more restores than pages that were active: {restore} > {activate}");
    assert!(restore <= three.counter("workingset_activate_file"));
    assert!(three.counter("workingset_activate_file") <= three.counter("workingset_refault_file"));
    // Restores make file reclaim look costly (lru_note_cost_refault): reclaim turns to anon.
    let ratio = |r: &RunReport| r.counter("pgscan_anon") as f64 / r.counter("pgscan_file").max(1) as f64;
    assert!(
        ratio(&three) > 1.3 * ratio(&two),
        "anon scanned per file page: {:.2} with restores, {:.2} without",
        ratio(&three),
        ratio(&two)
    );
}

const MLOCK: &str = r#"
profile = "linux-6.8"

[machine]
memory = "512MiB"
cpus = 2

[vars]
mb = 16

[[process]]
name = "locker"
program = '''
mmap a anon mb * 1MiB
touch a write
mlock a
mmap b anon 8MiB locked populate
touch b write
munlock a
'''
"#;

#[test]
fn every_mlocked_page_is_culled_and_rescued_once() {
    for mb in [16, 40] {
        let set = format!("vars.mb={mb}");
        let r = run(MLOCK, &[&set]);
        let pages = (mb + 8) * 256;
        // mlock of a populated region moves each page (__mlock_folio), a fault in a locked VMA
        // adds it (mlock_new_folio): culled once either way.
        assert_eq!(r.counter("unevictable_pgs_mlocked"), pages, "{mb} MiB");
        assert_eq!(r.counter("unevictable_pgs_culled"), pages, "{mb} MiB");
        // munlock of a, and the exit's munlock of b, give every page back.
        assert_eq!(r.counter("unevictable_pgs_munlocked"), pages, "{mb} MiB");
        assert_eq!(r.counter("unevictable_pgs_rescued"), pages, "{mb} MiB");
    }
}
