//! Every row of the profile table runs one small common scenario to the end with its pages
//! conserved. Debug builds check conservation after every simulated quantum (a panic inside the
//! run); the end state is then walked frame by frame. A row that panics, breaks conservation or
//! does not reclaim at all fails, and the message names every such row, not just the first.

use std::panic::{self, AssertUnwindSafe};

use vmlab_core::api::{self, RunOpts};

/// Small enough for a debug build, big enough that every era reclaims file and anonymous pages,
/// swaps out and back in, and meets the cases that have their own code: an i386 machine with
/// highmem (bounce buffers, lowmem reserves), a copy-on-write fork, mlock and munlock, a shared
/// file mapping written back by fsync, and a SysV shm segment.
const SCENARIO: &str = r#"
name = "all-profiles"
seed = 3
duration = "300s"

[machine]
memory = "128MiB"
cpus = 2
arch = "i386"
zones = { DMA = "16MiB", Normal = "48MiB", HighMem = "64MiB" }

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "256MiB"

[[file]]
name = "data{i}"
count = 2
size = "64MiB"

[[process]]
name = "anon"
program = '''
mmap heap anon 160MiB
touch heap write
fork {
    touch heap write len=16MiB
}
wait
touch heap read pattern=zipf count=20000
munmap heap
'''

[[process]]
name = "file"
program = '''
read data0 bs=64KiB
mmap m file=data1 shared prot=rw
touch m write len=8MiB
touch m read pattern=uniform count=5000
fsync data1
read data0
'''

[[process]]
name = "locker"
program = '''
mmap l anon 8MiB
mlock l
mmap s shm=seg 16MiB
touch s write
sleep 1s
munlock l
'''
"#;

/// Anonymous memory only, 1.5× RAM written twice: no file at all, so a page reclaim mistakes for
/// a page-cache page has no file to be removed from.
const ANON_ONLY: &str = r#"
name = "all-profiles-anon"
duration = "300s"

[machine]
memory = "128MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "256MiB"

[[process]]
name = "hog"
program = '''
mmap heap anon 192MiB
touch heap write
touch heap write
'''
"#;

/// (profile, scenario) pairs that fail today, with why. Each must still fail: a fix shows up
/// here as a pair to take off the list.
const KNOWN_FAILURES: &[(&str, &str, &str)] = &[];

/// One row through one scenario: Ok, or why it failed.
fn run_row(profile: &str, name: &str, text: &str) -> Result<(), String> {
    let sc = vmlab_core::workload::load_scenario_str(&format!("{name}.toml"), text, &[])
        .map_err(|e| format!("scenario does not load: {e:?}"))?;
    let opts = RunOpts { profile: Some(profile), ..RunOpts::default() };
    let (r, sim) = api::run(&sc, opts).map_err(|e| format!("run failed: {e:?}"))?;
    sim.k.check_conservation()?;
    sim.k.check_frames()?;
    // A row that never reclaims would pass the checks above without testing them.
    let scanned = r.counter("pgscan_kswapd") + r.counter("pgscan_direct");
    if scanned == 0 || r.counter("pswpout") == 0 || r.counter("pswpin") == 0 {
        return Err(format!(
            "did not reclaim and swap: pgscan {scanned}, pswpout {}, pswpin {}",
            r.counter("pswpout"),
            r.counter("pswpin")
        ));
    }
    if r.counter("oom_kill") != 0 {
        return Err(format!("{} OOM kills on a workload that fits in memory and swap", r.counter("oom_kill")));
    }
    Ok(())
}

#[test]
fn every_profile_runs_the_common_scenario_with_pages_conserved() {
    let names = vmlab_core::profiles::names();
    assert!(names.len() >= 9, "the profile table shrank: {names:?}");
    let mut failed = Vec::new();
    for (name, (sc_name, text)) in
        names.iter().flat_map(|n| [("all-profiles", SCENARIO), ("all-profiles-anon", ANON_ONLY)].map(|s| (n, s)))
    {
        let t = std::time::Instant::now();
        let res = panic::catch_unwind(AssertUnwindSafe(|| run_row(name, sc_name, text))).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(format!("panicked: {msg}"))
        });
        let known = KNOWN_FAILURES.iter().find(|k| k.0 == *name && k.1 == sc_name);
        let verdict = match (&res, known) {
            (Ok(()), None) => "ok",
            (Err(_), Some(_)) => "known failure",
            _ => "FAILED",
        };
        eprintln!("{name} {sc_name}: {verdict} ({:.1} s)", t.elapsed().as_secs_f64());
        match (res, known) {
            (Err(e), None) => failed.push(format!("{name} {sc_name}: {e}")),
            (Ok(()), Some(k)) => {
                failed.push(format!("{name} {sc_name}: passes now; take it off KNOWN_FAILURES ({})", k.2))
            }
            _ => {}
        }
    }
    assert!(failed.is_empty(), "{} of {} profiles failed:\n{}", failed.len(), names.len(), failed.join("\n"));
}
