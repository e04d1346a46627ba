//! PGFAULT accounting per era. A process reads every page of a mapped file once, so it takes
//! exactly one fault per page; what `pgfault` says depends on how the kernel counted:
//! - 2.4 and 2.6.26/2.6.36 sleep inside `handle_mm_fault` for the page's I/O: one call, one count;
//! - 2.6.38 drops mmap_sem and retries (VM_FAULT_RETRY): `handle_mm_fault` counted both calls;
//! - 5.9+ (`mm_account_fault`) counts a fault once it completes, whatever the retries.

use vmlab_core::api::{self, RunOpts};

const PAGES: u64 = 32 * 256;

const SCENARIO: &str = r#"
[machine]
memory = "256MiB"
cpus = 2

[[disk]]
name = "sda"
model = "hdd"

[[file]]
name = "data"
size = "32MiB"

[[process]]
name = "reader"
program = '''
mmap db file=data 32MiB
touch db read
mark done
'''
"#;

fn run(profile: &str) -> vmlab_core::stats::report::RunReport {
    let sc = vmlab_core::workload::load_scenario_str("pf.toml", SCENARIO, &[]).expect("loads");
    let (r, _) = api::run(&sc, RunOpts { profile: Some(profile), ..RunOpts::default() }).expect("runs");
    assert!(r.metrics.get("done").is_some(), "{profile}: the reader finishes");
    r
}

#[test]
fn a_fault_that_sleeps_holding_mmap_sem_counts_once() {
    for p in ["linux-2.4.9", "linux-2.6.26", "linux-2.6.36"] {
        let r = run(p);
        assert!(r.counter("pgmajfault") > 0, "{p}: some faults waited for the disk");
        assert_eq!(r.counter("pgfault"), PAGES, "{p}");
    }
}

#[test]
fn a_2638_fault_that_retried_counts_twice() {
    let r = run("linux-2.6.38");
    let retries = r.counter("pgfault_retry");
    assert!(retries > 0, "some faults dropped mmap_sem for their I/O");
    assert_eq!(r.counter("pgfault"), PAGES + retries);
}

#[test]
fn a_68_fault_counts_once_on_completion_whatever_its_retries() {
    let r = run("linux-6.8");
    assert!(r.counter("vma_lock_retry") > 0, "some per-VMA faults retried");
    assert_eq!(r.counter("pgfault"), PAGES);
}
