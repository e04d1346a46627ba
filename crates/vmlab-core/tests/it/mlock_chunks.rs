//! mlock in one-page chunks over mappings of one name made again and again (issue 19): every
//! chunk splits the VMA (2.4 and 6.8 alike here) and takes and drops mmap_sem, so a process
//! soon has a VMA per locked page. Dropping mmap_sem ends the per-VMA write locks of VMAs the
//! writer created; it once visited every VMA of the process to do so (quadratic: 53 s of wall
//! time per simulated second). It now visits only the range where such VMAs were made.

use vmlab_core::api::{self, RunOpts};

const SCENARIO: &str = r#"
duration = "300ms"
[machine]
memory = "1GiB"
cpus = 1
[[process]]
name = "p"
program = '''
loop {
  mmap a anon 4MiB
  mlock a chunk=4K
}
'''
"#;

#[test]
fn mapping_and_locking_page_by_page_stays_linear_and_leaves_no_vma_write_locked() {
    for profile in ["linux-6.8", "linux-2.4.9"] {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let sc = vmlab_core::workload::load_scenario_str("mlock-chunks.toml", SCENARIO, &[]).expect("loads");
            let (r, sim) = api::run(&sc, RunOpts { profile: Some(profile), ..Default::default() }).expect("runs");
            let vmas: Vec<(usize, usize)> = sim
                .s
                .tasks
                .iter()
                .filter_map(|t| t.mm)
                .map(|mm| {
                    let v = &sim.k.mm(mm).vmas;
                    (v.len(), v.iter().filter(|v| v.write_locked).count())
                })
                .collect();
            let _ = tx.send((r.elapsed_s, vmas));
        });
        // About 0.1 s of wall time in the ci profile; the quadratic unlock took over a minute.
        let wait = std::time::Duration::from_secs(if cfg!(debug_assertions) { 300 } else { 20 });
        let (elapsed, vmas) = rx.recv_timeout(wait).unwrap_or_else(|_| panic!("{profile}: no result within {wait:?}"));
        assert!(elapsed > 0.0, "{profile}");
        assert!(!vmas.is_empty(), "{profile}");
        for (n, locked) in vmas {
            assert!(n > 10_000, "{profile}: {n} VMAs: the chunks split the mappings");
            assert_eq!(locked, 0, "{profile}: {locked} VMAs still write-locked after the last unlock");
        }
    }
}
