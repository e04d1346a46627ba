//! `vmlab real`: its refusals (which need neither root nor a cgroup), and one small real run on
//! the host kernel that runs only as root with a memory cgroup, and is skipped (saying why)
//! otherwise. The real run must leave no cgroup, swap file or working directory behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{status_and_text, vmlab_cmd, write_file};

fn vmlab(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    status_and_text(&vmlab_cmd().args(args).envs(env.iter().copied()).output().expect("vmlab runs"))
}

/// A scratch directory removed when the test ends, failed or not.
struct TestDir(PathBuf);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn test_dir(tag: &str) -> TestDir {
    let d = std::env::temp_dir().join(format!("vmlab-real-test-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tmp dir");
    TestDir(d)
}

/// 64 MiB "machine": 32 MiB of anon touched, then a 96 MiB file read twice, which cannot stay
/// cached within the limit, so both reads must go to the disk.
const SMALL: &str = r#"
name = "real-small"
[machine]
memory = "64MiB"
cpus = 1

[[file]]
name = "data"
size = "96MiB"

[[process]]
name = "reader"
program = '''
mark start
mmap a anon 32MiB
touch a write
mark touched
read data
read data
mark read_twice
'''
"#;

const SWAP: &str = r#"
[machine]
memory = "32MiB"

[swap]
size = "64MiB"

[[process]]
name = "hog"
program = '''
mmap a anon 48MiB
touch a write
mark written
touch a read
'''
"#;

const OOM: &str = r#"
[machine]
memory = "32MiB"

[[process]]
name = "hog"
program = '''
mmap a anon 64MiB
touch a write
mark never
'''

[[process]]
name = "bystander"
program = '''
mmap b anon 4MiB
touch b write
sleep 300ms
mark survived
'''
"#;

const FOREVER: &str = r#"
linger = "1s"
[machine]
memory = "64MiB"

[[process]]
name = "idle"
program = '''
mmap a anon 8MiB
touch a write
mark touched
sleep forever
'''

[[process]]
name = "late"
start = "500ms"
program = '''
mark late_start
'''
"#;

#[test]
fn unsupported_operation_is_refused_with_its_position() {
    let d = test_dir("fork");
    let p = write_file(&d, "fork.toml", &SMALL.replace("touch a write", "fork {\n  touch a write\n}"));
    let (code, _, err) = vmlab(&["real", &p], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("fork.toml:16:1"), "{err}");
    assert!(err.contains("`fork` is not supported"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    // Inside a thread body too.
    let p =
        write_file(&d, "cpu.toml", &SMALL.replace("read data\nread data", "read data\nthreads 2 {\n  migrate 0\n}"));
    let (code, _, err) = vmlab(&["real", &p], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cpu.toml:20:3") && err.contains("migrate"), "{err}");
}

/// Threads of one process taking a tree's files from a shared queue, caches of the scenario's
/// own files dropped first: every file is taken once, by some thread, and read from the disk.
const THREADS: &str = r#"
[machine]
memory = "256MiB"

[[filetree]]
name = "t"
total = "24MiB"
mean = "160KiB"

[[process]]
name = "scan"
program = '''
drop_caches
mark start
threads 3 {
    foreach f in queue t count=150 {
        read t{f}
        mark got{f}
    }
}
mark done
'''
"#;

#[test]
fn real_run_threads_share_a_queue() {
    let Some(r) = real_scenario("threads", THREADS) else { return };
    let m = r.v["metrics"].as_object().expect("metrics");
    let got = (0..150).filter(|i| m.contains_key(&format!("got{i}"))).count();
    // The queue hands out each index below its count once.
    assert_eq!(got, 150, "{m:?}");
    let t = |k: &str| m[k].as_f64().unwrap_or(-1.0);
    assert!(t("done") >= t("start") && (0..150).all(|i| t(&format!("got{i}")) <= t("done")));
    let pgpgin = r.v["vmstat"]["pgpgin"].as_u64().unwrap_or(0);
    assert!(pgpgin >= 20 * 1024, "pgpgin {pgpgin} KiB: the tree was not read from the disk");
}

#[test]
fn host_tunables_are_refused_not_ignored() {
    let d = test_dir("vm");
    let p = write_file(&d, "vm.toml", &format!("{SMALL}\n[vm]\nswappiness = 10\n"));
    let (code, _, err) = vmlab(&["real", &p], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("[vm]"), "{err}");
}

#[test]
fn without_root_it_refuses_before_touching_anything() {
    let d = test_dir("user");
    let p = write_file(&d, "s.toml", SMALL);
    let work = d.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let (code, _, err) = vmlab(&["real", &p, "--dir", &work.to_string_lossy()], &[("VMLAB_REAL_PRETEND_NONROOT", "1")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs root"), "{err}");
    assert_eq!(std::fs::read_dir(&work).map(|r| r.count()).unwrap_or(1), 0, "nothing created");
}

#[test]
fn without_a_memory_cgroup_it_refuses() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the cgroup check comes after the root check, and this is not root");
        return;
    }
    let d = test_dir("nocg");
    let p = write_file(&d, "s.toml", SMALL);
    let empty = d.join("cgroup");
    std::fs::create_dir_all(&empty).expect("dir");
    let (code, _, err) = vmlab(&["real", &p], &[("VMLAB_REAL_CGROUP_ROOT", &empty.to_string_lossy())]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no memory cgroup"), "{err}");
}

/// Why a real run cannot happen here, if it cannot.
fn cannot_run_real() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root");
    }
    let v1 = Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file();
    let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"));
    if !v1 && !v2 {
        return Some("no memory cgroup controller");
    }
    None
}

/// Can this host swap on a file in `dir` (a container may lack the capability, a filesystem
/// the support)? Tried with a 1 MiB swap file, switched off and removed again.
fn cannot_swapon(dir: &Path) -> Option<String> {
    let f = dir.join("probe.swap");
    std::fs::write(&f, vec![0u8; 1 << 20]).ok()?;
    let ok = |cmd: &str| Command::new(cmd).arg(&f).output().is_ok_and(|o| o.status.success());
    let why = if !ok("mkswap") {
        Some("mkswap failed on a probe file".to_string())
    } else if !ok("swapon") {
        Some("swapon of a probe file failed (no swap-file support here)".to_string())
    } else {
        ok("swapoff");
        None
    };
    let _ = std::fs::remove_file(&f);
    why
}

fn leftovers(pid: u32, work: &Path) -> Vec<String> {
    let mut left = Vec::new();
    let name = format!("vmlab-real-{pid}");
    for cg in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        if Path::new(cg).join(&name).exists() {
            left.push(format!("{cg}/{name}"));
        }
    }
    if work.join(&name).exists() {
        left.push(work.join(&name).display().to_string());
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    if swaps.contains(&name) {
        left.push(format!("active swap: {swaps}"));
    }
    let instance = Path::new("/sys/kernel/tracing/instances").join(&name);
    if instance.exists() {
        left.push(instance.display().to_string());
    }
    left
}

fn real_run(d: &Path, scenario: &str) -> (serde_json::Value, String) {
    let work = d.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let json = d.join("real.json");
    let child = vmlab_cmd()
        .args([
            "real",
            scenario,
            "--interval",
            "0.2",
            "--dir",
            &work.to_string_lossy(),
            "--json",
            &json.to_string_lossy(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("vmlab runs");
    let pid = child.id();
    let out = child.wait_with_output().expect("vmlab ends");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert_eq!(leftovers(pid, &work), Vec::<String>::new(), "left behind");
    let text = std::fs::read_to_string(&json).expect("JSON written");
    (serde_json::from_str(&text).expect("valid JSON"), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A real run of scenario `text` (as `TAG.toml` in a scratch directory), or None, after saying
/// why, when this host cannot do one.
struct Real {
    dir: TestDir,
    scenario: String,
    v: serde_json::Value,
    stdout: String,
}

static REAL_RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn real_scenario(tag: &str, text: &str) -> Option<Real> {
    if let Some(why) = cannot_run_real() {
        eprintln!("skipped real run `{tag}`: {why}");
        return None;
    }
    let dir = test_dir(tag);
    let scenario = write_file(&dir, &format!("{tag}.toml"), text);
    // One real run at a time: a swap file is host-wide, so while the swap test's is on, another
    // test's cgroup could swap instead of meeting its limit (the OOM test would then see no OOM).
    let _one = REAL_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if text.contains("[swap]") {
        if let Some(why) = cannot_swapon(&dir) {
            eprintln!("skipped real run `{tag}`: {why}");
            return None;
        }
    }
    let (v, stdout) = real_run(&dir, &scenario);
    Some(Real { dir, scenario, v, stdout })
}

#[test]
fn real_run_reads_from_disk_within_the_cgroup_limit() {
    let Some(r) = real_scenario("run", SMALL) else { return };
    let v = &r.v;
    let text = &r.stdout;
    assert_eq!(v["schema"], "vmlab.run/1");
    assert_eq!(v["params"]["real"], true);
    assert!(v["params"]["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    // Both reads miss: the file is larger than the whole limit. pgpgin is host-wide, so it can
    // only be larger than ours, never smaller.
    let pgpgin = v["vmstat"]["pgpgin"].as_u64().unwrap_or(0);
    assert!(pgpgin >= 96 * 1024 * 3 / 2, "pgpgin {pgpgin} KiB: the second read should have missed the cache too");
    let limit = v["params"]["cgroup"]["limit_bytes"].as_u64().unwrap_or(0);
    let peak = v["params"]["cgroup"]["max_usage_bytes"].as_u64().unwrap_or(u64::MAX);
    assert_eq!(limit, 64 << 20);
    assert!(peak <= limit + (1 << 20), "peak {peak} over the limit {limit}");
    assert!(peak >= 32 << 20, "peak {peak}: the 32 MiB touched were not charged to the cgroup");
    // The workload's system time, beside the marks: some, and no more than its CPUs allow.
    let sys = v["metrics"]["sys_s"].as_f64().expect("metrics.sys_s");
    assert!(sys > 0.0 && sys <= v["elapsed_s"].as_f64().unwrap() * 1.01, "sys_s {sys}");
    // In program order both by time and in the file (serde_json's map here sorts its keys).
    let mut marks: Vec<(&String, f64)> = v["metrics"]
        .as_object()
        .expect("metrics")
        .iter()
        .filter(|(k, _)| *k != "sys_s")
        .map(|(k, t)| (k, t.as_f64().unwrap_or(-1.0)))
        .collect();
    marks.sort_by(|a, b| a.1.total_cmp(&b.1));
    let names: Vec<&str> = marks.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["start", "touched", "read_twice"], "{marks:?}");
    let raw = std::fs::read_to_string(r.dir.join("real.json")).unwrap_or_default();
    let at = |k: &str| raw.find(&format!("\"{k}\": ")).unwrap_or(usize::MAX);
    assert!(at("start") < at("touched") && at("touched") < at("read_twice"), "marks out of order in the file");
    assert!(v["elapsed_s"].as_f64().unwrap_or(0.0) >= marks[2].1);
    assert_eq!(v["tasks"][0]["name"], "reader");
    // The workload's own reclaim, traced in its task: the file read twice through a 64 MiB limit
    // is reclaimed by the reader itself, and the host-wide counters hold at least as much.
    if Path::new("/sys/kernel/tracing/instances").is_dir() {
        let own = &v["own"];
        assert_eq!(own["complete"], true, "own: {own}");
        let (scan, steal) = (own["counters"]["pgscan_file"].as_u64(), own["counters"]["pgsteal_file"].as_u64());
        assert!(steal.is_some_and(|s| s >= 8192), "own: {own}");
        assert!(
            scan >= steal && scan <= v["vmstat"]["pgscan_file"].as_u64(),
            "own {scan:?}, host-wide {}",
            v["vmstat"]
        );
        assert!(text.contains("The workload's own counters"), "{text}");
    }
    assert!(
        text.contains("emulated by the memory limit of cgroup"),
        "the summary says the machine is a cgroup limit: {text}"
    );
    // The same JSON works with `vmlab compare` next to a simulated run.
    let sim = r.dir.join("sim.json");
    let (code, _, err) = vmlab(&["run", &r.scenario, "--json", &sim.to_string_lossy()], &[]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = vmlab(&["compare", &sim.to_string_lossy(), &r.dir.join("real.json").to_string_lossy()], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read_twice") && out.contains("elapsed_s"), "{out}");
}

/// A tracefs that cannot be used (here `VMLAB_TRACEFS` points at none) is one line on standard
/// error, and the run goes on without `own`.
#[test]
fn real_run_without_tracefs_goes_on_without_own() {
    if let Some(why) = cannot_run_real() {
        eprintln!("skipped: {why}");
        return;
    }
    let d = test_dir("notrace");
    let scenario = write_file(&d, "notrace.toml", SMALL);
    let work = d.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let json = d.join("real.json");
    let _one = REAL_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    let (w, j) = (work.to_string_lossy(), json.to_string_lossy());
    let (code, _, err) =
        vmlab(&["real", &scenario, "--dir", &w, "--json", &j], &[("VMLAB_TRACEFS", "/nonexistent-tracefs")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("own counters are not traced") && err.contains("/nonexistent-tracefs/instances"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON")).expect("JSON");
    assert!(v.get("own").is_none(), "{}", v["own"]);
    assert!(v["vmstat"]["pgscan_file"].as_u64().is_some());
}

/// A [swap] scenario: swapon of a file for the run, pages swapped out under the cgroup limit,
/// and the swap file switched off and gone afterwards.
#[test]
fn real_run_with_swap_swaps_and_cleans_up() {
    let Some(r) = real_scenario("swap", SWAP) else { return };
    let v = &r.v;
    let pswpout = v["vmstat"]["pswpout"].as_u64().unwrap_or(0);
    // 48 MiB of anon in a 32 MiB limit: at least the excess must have gone to swap.
    assert!(pswpout >= 16 * 256, "pswpout {pswpout} pages");
    assert_eq!(v["params"]["swap_bytes"], 64u64 << 20);
}

/// Over the limit without swap: the cgroup's OOM killer kills the hog, as the simulator's
/// oom_kill does, and the run goes on with the other process.
#[test]
fn real_run_survives_the_cgroup_oom_killer() {
    let Some(r) = real_scenario("oom", OOM) else { return };
    let v = &r.v;
    assert_eq!(v["params"]["cgroup"]["oom_killed"], serde_json::json!(["hog"]));
    assert!(v["metrics"]["survived"].as_f64().is_some(), "{}", v["metrics"]);
    assert!(v["metrics"].get("never").is_none(), "{}", v["metrics"]);
}

/// Every supported operation, with branches on `errno` (RLIMIT_MEMLOCK, EINVAL from madvise on a
/// locked range, ENOENT from a second unlink): the real kernel and the simulator take the same ones.
#[test]
fn real_run_sets_errno_as_the_simulator_does() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/real-ops.toml")).expect("real-ops.toml");
    let Some(r) = real_scenario("ops", &text) else { return };
    let real = &r.v;
    let (code, out, err) = vmlab(&["run", &r.scenario, "--json", "-"], &[]);
    assert_eq!(code, 0, "{err}");
    let sim: serde_json::Value = serde_json::from_str(&out).expect("sim JSON");
    // The marks; `sys_s` is `vmlab real`'s own (a plain `run` does not report it).
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["metrics"].as_object().map(|m| m.keys().filter(|k| *k != "sys_s").cloned().collect()).unwrap_or_default()
    };
    assert_eq!(names(real), names(&sim));
    for m in ["mlock_failed", "mlock_small_ok", "madvise_locked_einval", "unlink_enoent", "end"] {
        assert!(names(real).iter().any(|n| n == m), "{m} missing: {:?}", names(real));
    }
}

/// `start`, `sleep forever` and `linger`: the run ends `linger` after the last process exits while
/// the other sleeps forever (then is killed), not before and not never.
#[test]
fn real_run_ends_after_linger_when_the_rest_sleeps_forever() {
    let Some(r) = real_scenario("forever", FOREVER) else { return };
    let v = &r.v;
    let late = v["metrics"]["late_start"].as_f64().unwrap_or(-1.0);
    assert!(late >= 0.5, "started at {late} s, before its start time");
    let elapsed = v["elapsed_s"].as_f64().unwrap_or(0.0);
    assert!(
        elapsed >= late + 1.0 && elapsed < late + 4.0,
        "ended at {elapsed} s; late started at {late} s, linger 1 s"
    );
    assert!(v["timeline"].as_array().map_or(0, |t| t.len()) >= 5, "samples every 0.2 s");
    let procs = v["tasks"].as_array().map_or(0, |t| t.iter().filter(|x| x["kthread"] == false).count());
    assert_eq!(procs, 2, "{}", v["tasks"]);
}

/// A run that takes a while at each stage: files to write, a swap file, a process that stays.
const STAGES: &str = r#"
linger = "60s"
[machine]
memory = "32MiB"

[swap]
size = "32MiB"

[[file]]
name = "f{i}"
count = 4
size = "16MiB"

[[process]]
name = "stay"
program = '''
mmap a anon 4MiB
touch a write
sleep forever
'''
"#;

const TINY: &str = r#"
[machine]
memory = "16MiB"

[[process]]
name = "p"
program = '''
mmap a anon 1MiB
touch a write
'''
"#;

/// Pids of the tasks in a `vmlab-real-<pid>` cgroup.
fn cgroup_tasks(pid: u32) -> Vec<u32> {
    ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"]
        .iter()
        .filter_map(|cg| std::fs::read_to_string(Path::new(cg).join(format!("vmlab-real-{pid}/cgroup.procs"))).ok())
        .flat_map(|s| s.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// SIGKILL during setup (files being written), after swapon, mid-run (children in the cgroup)
/// and in teardown (the run over, its children gone, the cgroup not yet removed): the killed
/// run cannot clean up, its children die with it, and the next `vmlab real` sweeps the cgroup,
/// the active swap file and the directory. Teardown takes milliseconds, so that stage is tried
/// until a kill lands in it.
#[test]
fn sigkill_at_three_stages_leaves_nothing_after_the_next_run() {
    if let Some(why) = cannot_run_real() {
        eprintln!("skipped: {why}");
        return;
    }
    let d = test_dir("sigkill");
    let _one = REAL_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_swapon(&d) {
        eprintln!("skipped: {why}");
        return;
    }
    let work = d.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let scenario = write_file(&d, "stages.toml", STAGES);
    let tiny = write_file(&d, "tiny.toml", TINY);
    let short = write_file(&d, "short.toml", &STAGES.replace("linger = \"60s\"", "duration = \"1s\""));
    let cgroup_exists = |pid: u32| {
        ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"]
            .iter()
            .any(|cg| Path::new(cg).join(format!("vmlab-real-{pid}")).is_dir())
    };
    let seen_tasks = std::cell::Cell::new(false);
    // (stage, scenario, has the run with this pid reached the stage?)
    type Stage<'a> = (&'a str, &'a str, &'a dyn Fn(u32) -> bool);
    let stages: [Stage; 4] = [
        ("setup", &scenario, &|pid| work.join(format!("vmlab-real-{pid}/files")).exists()),
        ("swapon", &scenario, &|pid| {
            std::fs::read_to_string("/proc/swaps").unwrap_or_default().contains(&format!("vmlab-real-{pid}/"))
        }),
        ("run", &scenario, &|pid| !cgroup_tasks(pid).is_empty()),
        ("teardown", &short, &|pid| {
            let tasks = !cgroup_tasks(pid).is_empty();
            let ended = seen_tasks.get() && !tasks && cgroup_exists(pid);
            seen_tasks.set(seen_tasks.get() || tasks);
            ended
        }),
    ];
    for (stage, scenario, reached) in stages {
        let mut tries = 0;
        let (pid, tasks) = loop {
            seen_tasks.set(false);
            let mut child = vmlab_cmd()
                .args(["real", scenario, "--dir", &work.to_string_lossy()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("vmlab runs");
            let pid = child.id();
            let t = std::time::Instant::now();
            while !reached(pid) && child.try_wait().expect("wait").is_none() {
                assert!(t.elapsed().as_secs() < 60, "stage {stage} not reached");
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let tasks = cgroup_tasks(pid);
            let missed = child.try_wait().expect("wait").is_some();
            child.kill().expect("SIGKILL");
            let _ = child.wait();
            if !missed {
                break (pid, tasks);
            }
            // It finished cleanly before the poll saw the stage: nothing left, try again.
            assert_eq!(leftovers(pid, &work), Vec::<String>::new(), "stage {stage}: a clean run left");
            tries += 1;
            assert!(tries < 20, "stage {stage}: no SIGKILL landed in it in {tries} runs");
        };
        // The killed run's children die with it (a zombie is dead: it waits for init to reap it).
        let running = |p: &u32| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .is_ok_and(|st| st.rsplit(')').next().and_then(|r| r.split_whitespace().next()) != Some("Z"))
        };
        let t = std::time::Instant::now();
        while tasks.iter().any(running) {
            assert!(t.elapsed().as_secs() < 5, "stage {stage}: children {tasks:?} outlived vmlab");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let (code, _, err) = vmlab(&["real", &tiny, "--dir", &work.to_string_lossy()], &[]);
        assert_eq!(code, 0, "stage {stage}: {err}");
        // Teardown may have finished its removals between the poll and the kill.
        assert!(err.contains("left by an earlier run") || stage == "teardown", "stage {stage}: {err}");
        assert_eq!(leftovers(pid, &work), Vec::<String>::new(), "stage {stage}: left behind");
    }
}

/// A loop with no operation in it ends with the simulator's error, at the loop, and cleans up.
#[test]
fn real_loop_that_does_nothing_ends_with_a_positioned_error() {
    if let Some(why) = cannot_run_real() {
        eprintln!("skipped: {why}");
        return;
    }
    let d = test_dir("noop");
    let work = d.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let p =
        write_file(&d, "noop.toml", &TINY.replace("touch a write", "let x = 0\nfor i in 0..1000000000000 { x += 1 }"));
    let _one = REAL_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    let (code, _, err) = vmlab(&["real", &p, "--dir", &work.to_string_lossy()], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("noop.toml:10:1") && err.contains("steps without"), "{err}");
    assert!(std::fs::read_dir(&work).expect("work").next().is_none(), "left behind in {}", work.display());
}

/// `run --host` measures the disk of `--disk-dir` once (a 256 MiB O_DIRECT scratch file, about a
/// second), caches it per device, and reuses the cache until `--remeasure`. Needs no root; skipped
/// where the file system refuses O_DIRECT (tmpfs).
#[test]
fn run_host_measures_the_disk_once_and_caches_it() {
    let d = test_dir("disk");
    let cache = d.join("cache");
    let sc = d.join("s.toml");
    std::fs::write(&sc, "[machine]\nmemory = \"64MiB\"\n\n[[process]]\nname = \"p\"\nprogram = 'sleep 1ms'\n").unwrap();
    let dir = d.to_string_lossy().into_owned();
    let s = sc.to_string_lossy().into_owned();
    let env = [("VMLAB_CACHE_DIR", cache.to_str().unwrap())];
    let (code, out, err) = vmlab(&["run", "--host", "--disk-dir", &dir, &s, "--json", "-"], &env);
    if code == 2 && err.contains("Invalid argument") {
        eprintln!("skipped: {dir} refuses O_DIRECT: {err}");
        return;
    }
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let disk = v["notes"]["host_disk"].as_str().unwrap().to_string();
    assert!(disk.contains(" => bandwidth=") && disk.starts_with(&dir), "{disk}");
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "one cache file: {files:?}");
    assert!(!std::fs::read_dir(&*d).unwrap().flatten().any(|e| e.file_name().to_string_lossy().contains("probe")));
    // The cache is what the next run takes: edit it and the run follows.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let v2: serde_json::Value = serde_json::from_str(&text).unwrap();
    let edited = text.replace(&format!("\"read_4k_ns\": {}", v2["read_4k_ns"]), "\"read_4k_ns\": 123456");
    std::fs::write(&files[0], &edited).unwrap();
    let (_, out, _) = vmlab(&["run", "--host", "--disk-dir", &dir, &s, "--json", "-"], &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["notes"]["host_disk"].as_str().unwrap().contains("4KiB read 123 us"), "{}", v["params"]);
    let (_, out, _) = vmlab(&["run", "--host", "--remeasure", "--disk-dir", &dir, &s, "--json", "-"], &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!v["notes"]["host_disk"].as_str().unwrap().contains("4KiB read 123 us"), "--remeasure measured");
}
