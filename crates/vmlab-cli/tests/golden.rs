//! Golden hashes: the SHA-256 of the JSON of every `vmlab reproduce SEED` and of every example
//! scenario under every profile, against `tests/golden/hashes.txt`. Any change to any output
//! fails here, so an output moves only on purpose: `VMLAB_BLESS=1` rewrites the file, and the
//! commit that changes it says why.
//!
//! Optimised builds only (the seeds run at full size): `scripts/test-all.sh` runs it in the `ci`
//! profile; by hand, `cargo test --release -p vmlab --test golden -- --ignored --nocapture`.
//! Each run is printed as it finishes. `VMLAB_GOLDEN_ALL=1` also runs the seeds in `SLOW`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sha2::{Digest, Sha256};

/// Seeds left out unless VMLAB_GOLDEN_ALL=1, with why. Their hashes stay in the file (a bless
/// without them keeps the old lines) and are checked whenever they are run.
const SLOW: &[(&str, &str)] =
    &[("quicklists", "its 1 TiB machine alone takes longer than the whole suite's budget on a 2-core CI box")];

/// Runs that panic today, with why: each must still fail (exit 101), so a fix shows up here as a
/// run to take off this list and bless. Not in the hash file.
const KNOWN_PANICS: &[(&str, &str)] = &[];

const HEADER: &str = "\
# SHA-256 of vmlab's JSON output, one `sha256  name` line each (sha256sum's format):
#   reproduce-SEED.json        vmlab reproduce SEED --json FILE            (every seed of --list)
#   run-EXAMPLE-PROFILE.json   vmlab run scenarios/examples/EXAMPLE.toml --profile PROFILE --json FILE
# run from the repository root by crates/vmlab-cli/tests/golden.rs, which scripts/test-all.sh runs
# in the ci profile. Any change to any of these outputs fails that test.
#
# Rewrite on purpose only:
#   VMLAB_BLESS=1 cargo test --release -p vmlab --test golden -- --ignored --nocapture
# and a commit that changes this file must say in its message which outputs moved and why.
";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn hashes_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/hashes.txt")
}

/// `vmlab ARGS` from the repository root; its standard output, or a panic with its stderr.
fn vmlab(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vmlab")).args(args).current_dir(root()).output().expect("vmlab runs");
    assert!(out.status.success(), "vmlab {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

struct Job {
    name: String,
    args: Vec<String>,
}

/// Every run, named as its output file. The lists come from the program and the tree, so a new
/// seed, profile or example without a hash fails until it is blessed.
fn jobs(out: &Path, all: bool) -> (Vec<Job>, Vec<String>) {
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    let seeds: Vec<String> =
        vmlab(&["reproduce", "--list"]).lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect();
    assert!(!seeds.is_empty(), "vmlab reproduce --list listed no seed");
    for s in seeds {
        let name = format!("reproduce-{s}.json");
        if !all && SLOW.iter().any(|(n, _)| *n == s) {
            skipped.push(name);
            continue;
        }
        let f = out.join(&name).to_string_lossy().into_owned();
        jobs.push(Job { name, args: vec!["reproduce".into(), s, "--json".into(), f] });
    }
    let profiles: serde_json::Value = serde_json::from_str(&vmlab(&["profiles", "--json"])).expect("profiles JSON");
    let profiles: Vec<String> = profiles
        .as_array()
        .expect("a list of profiles")
        .iter()
        .map(|p| p["name"].as_str().expect("a profile name").to_string())
        .collect();
    let mut examples: Vec<String> = std::fs::read_dir(root().join("scenarios/examples"))
        .expect("scenarios/examples")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".toml").map(String::from))
        .collect();
    examples.sort();
    assert!(!examples.is_empty(), "no example scenarios");
    for ex in &examples {
        for p in &profiles {
            let name = format!("run-{ex}-{p}.json");
            let f = out.join(&name).to_string_lossy().into_owned();
            let scenario = format!("scenarios/examples/{ex}.toml");
            jobs.push(Job {
                name,
                args: vec!["run".into(), scenario, "--profile".into(), p.clone(), "--json".into(), f],
            });
        }
    }
    (jobs, skipped)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn read_hashes(p: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once("  ").map(|(h, n)| (n.trim().to_string(), h.trim().to_string())))
        .collect()
}

#[test]
#[ignore = "optimised build, minutes: scripts/test-all.sh runs it with --ignored"]
fn outputs_match_the_golden_hashes() {
    let bless = std::env::var("VMLAB_BLESS").is_ok_and(|v| v == "1");
    let all = std::env::var("VMLAB_GOLDEN_ALL").is_ok_and(|v| v == "1");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden");
    std::fs::create_dir_all(&out).expect("output dir");
    let (jobs, skipped) = jobs(&out, all);
    for s in &skipped {
        let why = SLOW.iter().find(|(n, _)| format!("reproduce-{n}.json") == *s).map_or("", |w| w.1);
        eprintln!("golden: {s} left out ({why}); VMLAB_GOLDEN_ALL=1 runs it");
    }
    let want = read_hashes(&hashes_path());
    let n = jobs.len();
    eprintln!("golden: {n} runs, outputs in {}", out.display());

    // The simulator is single-threaded: one run per core, the seeds (the longest) first. Each
    // is its own process, so the order they finish in cannot change an output.
    let mut jobs = jobs;
    jobs.reverse();
    let queue = Arc::new(Mutex::new(jobs));
    let got = Arc::new(Mutex::new(BTreeMap::new()));
    let running = Arc::new(Mutex::new(BTreeMap::<String, Instant>::new()));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    let start = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, got, want, running) = (queue.clone(), got.clone(), want.clone(), running.clone());
            std::thread::spawn(move || loop {
                let Some(job) = queue.lock().unwrap().pop() else { return };
                let t = Instant::now();
                running.lock().unwrap().insert(job.name.clone(), t);
                let o = Command::new(env!("CARGO_BIN_EXE_vmlab"))
                    .args(&job.args)
                    .current_dir(root())
                    .output()
                    .expect("vmlab runs");
                let known = KNOWN_PANICS.iter().find(|(n, _)| *n == job.name);
                let res = if let Some((_, why)) = known {
                    match o.status.code() {
                        Some(101) => Ok(format!("known panic: {why}")),
                        c => Err(format!(
                            "exit {c:?}, but it is listed in KNOWN_PANICS: take it off the list and bless its hash"
                        )),
                    }
                } else if o.status.success() {
                    let f = job.args.last().expect("the --json file");
                    std::fs::read(f).map(|b| sha256_hex(&b)).map_err(|e| format!("no JSON written ({e})"))
                } else {
                    Err(format!("exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr).trim()))
                };
                let verdict = match (&res, want.get(&job.name)) {
                    (Err(_), _) => "FAILED",
                    (Ok(_), _) if known.is_some() => "known panic",
                    (Ok(h), Some(w)) if h == w => "ok",
                    (Ok(_), Some(_)) => "CHANGED",
                    (Ok(_), None) => "NEW",
                };
                running.lock().unwrap().remove(&job.name);
                let mut got = got.lock().unwrap();
                got.insert(job.name.clone(), res);
                eprintln!(
                    "golden: [{:>2}/{n}] {:<44} {:>7.1} s  {verdict}  (at {:.0} s)",
                    got.len(),
                    job.name,
                    t.elapsed().as_secs_f64(),
                    start.elapsed().as_secs_f64()
                );
            })
        })
        .collect();
    // A seed can take over a minute: say what is still running every 30 s so a log is never
    // silent that long.
    let mut last = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if last.elapsed().as_secs() >= 30 {
            last = Instant::now();
            for (name, t) in running.lock().unwrap().iter() {
                eprintln!("golden: still running {name} ({:.0} s)", t.elapsed().as_secs_f64());
            }
        }
    }
    for h in handles {
        h.join().expect("worker");
    }
    let got = std::mem::take(&mut *got.lock().unwrap());

    let failed: Vec<String> = got.iter().filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}"))).collect();
    assert!(failed.is_empty(), "runs failed:\n{}", failed.join("\n"));
    let got: BTreeMap<String, String> = got
        .into_iter()
        .filter(|(n, _)| !KNOWN_PANICS.iter().any(|(k, _)| k == n))
        .map(|(n, r)| (n, r.unwrap()))
        .collect();

    if bless {
        let mut lines = want.clone();
        // A run that no longer exists goes; a left-out seed keeps its line.
        lines.retain(|n, _| got.contains_key(n) || skipped.contains(n));
        lines.extend(got.clone());
        let mut text = HEADER.to_string();
        for (n, h) in &lines {
            text.push_str(&format!("{h}  {n}\n"));
        }
        std::fs::create_dir_all(hashes_path().parent().unwrap()).expect("golden dir");
        std::fs::write(hashes_path(), text).expect("write hashes");
        eprintln!("golden: wrote {} ({} hashes)", hashes_path().display(), lines.len());
        return;
    }

    let mut problems = Vec::new();
    for (n, h) in &got {
        match want.get(n) {
            Some(w) if w == h => {}
            Some(w) => problems.push(format!("{n}: changed, {w} -> {h} (new output: {})", out.join(n).display())),
            None => problems.push(format!("{n}: no hash in the file (a new seed, profile or example?)")),
        }
    }
    for n in want.keys() {
        if !got.contains_key(n) && !skipped.contains(n) {
            problems.push(format!("{n}: in the file but no longer run"));
        }
    }
    for s in &skipped {
        if !want.contains_key(s) {
            problems.push(format!("{s}: left out and has no hash; bless it with VMLAB_GOLDEN_ALL=1"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} golden outputs differ from {}:\n{}\nIf the change is meant, rerun with VMLAB_BLESS=1 and say why in the commit message.",
        problems.len(),
        hashes_path().display(),
        problems.join("\n")
    );
    eprintln!("golden: {} outputs match in {:.0} s", got.len(), start.elapsed().as_secs_f64());
}
