//! The OOM killer: without swap, a process that touches more anonymous memory than the machine
//! has is chosen (largest footprint), killed, and its memory freed; a small bystander survives.

use vmlab_core::api::{self, RunOpts};

const SCENARIO: &str = r#"
[machine]
memory = "256MiB"
cpus = 2

[[process]]
name = "bystander"
program = '''
mmap small anon 16MiB
touch small write
sleep 5s
touch small write
mark bystander_done
'''

[[process]]
name = "hog"
start = "100ms"
program = '''
mmap big anon 512MiB
touch big write
mark hog_done
'''
"#;

#[test]
fn oom_killer_kills_the_largest_process_and_frees_its_memory() {
    let sc = vmlab_core::workload::load_scenario_str("oom.toml", SCENARIO, &[]).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    assert_eq!(r.counter("oom_kill"), 1, "exactly one OOM kill");
    assert!(r.metrics.get("hog_done").is_none(), "the hog must not finish");
    assert!(r.metrics.get("bystander_done").is_some(), "the bystander survives");
    // The hog's memory came back.
    let free_kb = r.meminfo.get("MemFree").copied().unwrap_or(0);
    assert!(free_kb > 200 * 1024, "MemFree {free_kb} kB after the kill");
    sim.k.check_frames().expect("frames consistent");
}

/// A machine without swap written past its size by one process, under every profile: the
/// allocation must end in the era's give-up (6.8/2.6's OOM killer, 2.4.9's kswapd calling
/// `out_of_memory`, 2.4.23's failed allocation killing the faulting task), not retry reclaim
/// forever (2.6.36/2.6.38 once did: direct reclaim claimed progress for any zone it visited).
/// The one era without a give-up is 2.4.9 with Phillips' bandaid (`&& 0` also skips kswapd's
/// `out_of_memory()`, the only caller of `oom_kill()`): there the run reaches its duration with
/// the hog still in reclaim, as on the patched kernel. Run on a thread so that a wall-clock
/// hang fails the test instead of hanging it.
#[test]
fn writing_past_memory_without_swap_gives_up_under_every_profile() {
    let mut failed = Vec::new();
    for (mib, write_mib) in [(64u64, 128u64), (96, 160)] {
        for profile in vmlab_core::profiles::names() {
            let p = vmlab_core::profiles::find(profile).expect("a profile");
            let gives_up = !(vmlab_core::vmscan::has_kreclaimd(&p) && p.kswapd_ignore_failure);
            let text = hog(mib, write_mib, "5s");
            match run_bounded(profile, text, &[]) {
                Err(e) => failed.push(format!("{profile}, {mib} MiB: {e}")),
                Ok((kills, done, elapsed)) => {
                    let ok = if gives_up {
                        kills == 1 && !done && elapsed < 5.0
                    } else {
                        kills == 0 && !done && elapsed == 5.0
                    };
                    if !ok {
                        failed.push(format!(
                            "{profile}, {mib} MiB (gives up: {gives_up}): {kills} OOM kills, hog finished: {done}, {elapsed:.2} simulated s"
                        ));
                    }
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// 2.4.23 has no OOM killer: with the fault handler's kill switched off, the refused fault is
/// only retried and nothing ever dies; with it on (the era's own value) the hog dies.
#[test]
fn the_2_4_23_give_up_is_the_fault_handlers_kill() {
    for profile in ["linux-2.4.23aa1", "linux-2.4.23aa2"] {
        let off = run_bounded(profile, hog(64, 128, "3s"), &["reclaim.fault_oom_kills=false"]).unwrap();
        assert_eq!(off, (0, false, 3.0), "{profile} without the fault handler's kill");
        let (kills, done, _) = run_bounded(profile, hog(64, 128, "3s"), &[]).unwrap();
        assert_eq!((kills, done), (1, false), "{profile} with it");
    }
}

/// Who dies differs: the OOM killer picks the largest process; 2.4.23's fault handler kills
/// whichever process faulted when the allocator gave up, here the smaller latecomer.
#[test]
fn the_fault_handler_kills_the_faulting_process_not_the_largest() {
    let text = r#"
duration = "20s"
[machine]
memory = "64MiB"
cpus = 1
[[process]]
name = "big"
program = '''
mmap a anon 36MiB
touch a write
sleep 2s
mark big_done
'''
[[process]]
name = "small"
start = "500ms"
program = '''
mmap b anon 40MiB
touch b write
mark small_done
'''
"#;
    let run = |profile| {
        let sc = vmlab_core::workload::load_scenario_str("oom-who.toml", text, &[]).expect("loads");
        api::run(&sc, RunOpts { profile: Some(profile), ..Default::default() }).expect("runs").0
    };
    let r = run("linux-2.4.23aa1");
    assert_eq!(r.counter("oom_kill"), 1, "2.4.23aa1: one kill");
    assert!(r.metrics.get("big_done").is_some(), "2.4.23aa1: the big sleeper survives");
    assert!(r.metrics.get("small_done").is_none(), "2.4.23aa1: the faulting latecomer dies");
    // 2.6's and 6.8's OOM killer goes for the largest, once: the latecomer's retries wait for
    // the victim's memory instead of killing again (6.8 once killed both). 2.6.26/27's fault
    // handler still kills the faulting task on VM_FAULT_OOM, but an order-0 allocation that may
    // enter the filesystem never fails there: it restarts after the OOM killer.
    for profile in ["linux-6.8", "linux-2.6.26", "linux-2.6.27", "linux-2.6.36", "linux-2.6.38"] {
        let r = run(profile);
        assert_eq!(r.counter("oom_kill"), 1, "{profile}: one kill");
        assert!(r.metrics.get("big_done").is_none(), "{profile}: the big sleeper dies");
        assert!(r.metrics.get("small_done").is_some(), "{profile}: the faulting latecomer finishes");
    }
}

/// One process writing `write_mib` of anon on a `mib` machine without swap.
fn hog(mib: u64, write_mib: u64, duration: &str) -> String {
    format!(
        "duration = \"{duration}\"\n[machine]\nmemory = \"{mib}MiB\"\ncpus = 1\n[[process]]\nname = \"hog\"\nprogram = '''\nmmap a anon {write_mib}MiB\ntouch a write\nmark hog_done\n'''\n"
    )
}

/// (OOM kills, the hog finished, simulated seconds) of `text` under `profile`, or an error when
/// it gives no result within a wall-clock bound.
fn run_bounded(profile: &'static str, text: String, sets: &[&str]) -> Result<(u64, bool, f64), String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let sc = vmlab_core::workload::load_scenario_str("oom-noswap.toml", &text, &sets).expect("loads");
        let r = api::run(&sc, RunOpts { profile: Some(profile), ..Default::default() }).map(|(r, _)| r);
        let _ = tx.send(r.map(|r| (r.counter("oom_kill"), r.metrics.get("hog_done").is_some(), r.elapsed_s)));
    });
    let wait = std::time::Duration::from_secs(if cfg!(debug_assertions) { 300 } else { 20 });
    match rx.recv_timeout(wait) {
        Err(_) => Err(format!("no result within {wait:?} of wall time")),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(x)) => Ok(x),
    }
}
