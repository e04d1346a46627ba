//! Seed 003 on the seed's 8 GiB box (2 nodes x 4 CPUs, ~5 GiB free). To stay fast in a debug
//! build the child maps 32 MiB and touches one page per 2 MiB — every fault builds a page-table
//! page, 19 per exit instead of the seed child's 8, so the quicklists fill in thousands of forks
//! instead of tens of thousands. The steady state is the bound check_pgt_cache trims to, as long
//! as a CPU can trim (16 pages a pass) what each exit brings; `vmlab reproduce quicklists` runs
//! the seed's own 10 MiB child.

use vmlab_core::reproduce::quicklists::{measure, Measured};
use vmlab_core::reproduce::ReproduceOpts;

/// The child maps 32 MiB and touches one page per 2 MiB.
const FAST_CHILD: [&str; 2] = ["vars.map=32MiB", "vars.step=2MiB"];

fn opts() -> ReproduceOpts {
    ReproduceOpts::default()
}

fn run(profile: &str, extra: &[&str]) -> Measured {
    let mut sets: Vec<String> = FAST_CHILD.iter().map(|s| s.to_string()).collect();
    sets.extend(extra.iter().map(|s| s.to_string()));
    measure(&opts(), "quicklists.toml", profile, &sets, true).expect("run")
}

const MIB: u64 = 1024;

#[test]
fn eight_gib_quicklists_before_and_after_the_fix() {
    let before = run("linux-2.6.26", &[]);
    let after = run("linux-2.6.27", &[]);
    eprintln!(
        "2.6.26: {} kB ({:.2}%, steady at {:?} s, {} forks); 2.6.27: {} kB ({:.2}%, steady at {:?} s)",
        before.quicklists_kb,
        before.ratio_pct,
        before.steady_s,
        before.forks,
        after.quicklists_kb,
        after.ratio_pct,
        after.steady_s
    );
    assert!(before.steady_s.is_some() && after.steady_s.is_some(), "both runs reach steady state");
    let q = before.quicklists_kb;
    assert!((600 * MIB..=1000 * MIB).contains(&q), "2.6.26 Quicklists {} MiB, want 600..1000", q / MIB);
    assert!(
        after.quicklists_kb as f64 <= 0.35 * q as f64,
        "2.6.27 Quicklists {} kB vs 2.6.26 {} kB",
        after.quicklists_kb,
        q
    );
    assert!(after.quicklists_kb > 0);
    // The JSON carries what the reproduction promises.
    assert_eq!(before.report.metrics.get("quicklists_kb").copied(), Some(q as f64));
    assert_eq!(before.report.params.get("cpus_per_node"), Some(&serde_json::json!(4)));
    assert_eq!(before.report.params.get("nodes"), Some(&serde_json::json!(2)));

    // Where the pages are: CPU 0 forks and never frees, so it caches nothing; every other CPU
    // caches, and all of it is node 0's memory (the children allocate on CPU 0) — the second
    // node's CPUs included, because quicklist_free keeps pages of any node.
    let (cpu0, _) = &before.per_cpu[0];
    assert_eq!(*cpu0, 0, "the forking CPU holds no quicklist pages");
    for (c, (len, by_node)) in before.per_cpu.iter().enumerate().skip(1) {
        assert!(*len > 0, "cpu{c} caches page tables");
        assert_eq!(by_node[0], *len, "cpu{c}'s quicklist holds only node-0 pages");
    }
    // Node-1 CPUs are bounded by node 1's free memory, which their node-0 pages do not shrink,
    // so each holds more than a node-0 CPU.
    assert!(before.per_cpu[4].0 > before.per_cpu[1].0);
}

#[test]
fn one_node_table_cells_match_the_seed_formula() {
    for (cpus, want) in [(2u32, 5.8), (4, 16.0)] {
        let m = run("linux-2.6.26", &["machine.nodes=1", &format!("machine.cpus={cpus}")]);
        eprintln!("1 node x {cpus}: {:.2}% ({} kB, steady at {:?} s)", m.ratio_pct, m.quicklists_kb, m.steady_s);
        assert!(m.steady_s.is_some());
        assert!((m.ratio_pct - want).abs() <= 2.0, "{cpus} CPUs: {:.2}% vs the seed's {want}%", m.ratio_pct);
    }
}

/// The seed's own child (10 MiB touched page by page): each exit leaves 8 page-table pages
/// (5 PTE pages, a PMD, a PUD and the pgd) on the CPU it moved to, none on CPU 0.
#[test]
fn seed_child_leaves_its_page_tables_on_the_cpu_it_exits_on() {
    let m = measure(&opts(), "quicklists.toml", "linux-2.6.26", &["duration=40.5s".to_string()], true).expect("run");
    let forks = m.forks;
    assert!(forks >= 25, "{forks} forks");
    let total: u64 = m.per_cpu.iter().map(|(l, _)| l).sum();
    assert_eq!(total, 8 * forks, "8 page-table pages per exited child");
    assert_eq!(m.per_cpu[0].0, 0);
    assert!(m.per_cpu[1..].iter().all(|(l, _)| *l >= 8 * (forks / 7)));
}

#[test]
fn same_run_same_json() {
    let a = run("linux-2.6.26", &["machine.nodes=1", "machine.cpus=2"]);
    let b = run("linux-2.6.26", &["machine.nodes=1", "machine.cpus=2"]);
    assert_eq!(a.report.with_wall_s_zeroed().to_json_string(), b.report.with_wall_s_zeroed().to_json_string());
}
