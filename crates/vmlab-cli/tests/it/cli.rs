//! The `vmlab` command: bad input exits 2 with `file:line:col` and what was expected; good input
//! runs and its JSON parses.

use crate::common::{scratch_dir, status_and_text, vmlab_cmd, write_file};

fn vmlab(args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = status_and_text(&vmlab_cmd().args(args).output().expect("vmlab runs"));
    (code, out, unwrap_lines(&err))
}

/// miette wraps a long message at the terminal's width behind a `│` gutter, at spaces and after
/// hyphens and en dashes (`linux-` / `2.6.36`, `0–` / `100`; where depends on the length of the
/// temporary path, so on the test's PID); the tests look for phrases, so join the lines back.
fn unwrap_lines(err: &str) -> String {
    let mut out = String::new();
    for l in err.lines().map(|l| l.trim_start_matches(|c: char| c.is_whitespace() || c == '│')) {
        if !out.is_empty() && !out.ends_with(['-', '–']) {
            out.push(' ');
        }
        out.push_str(l);
    }
    out
}

fn scenario(name: &str, text: &str) -> String {
    write_file(&scratch_dir("vmlab-cli-test"), name, text)
}

const GOOD: &str = r#"
[machine]
memory = "64MiB"
cpus = 1

[[process]]
name = "p"
program = '''
mmap a anon 8MiB
touch a write
'''
"#;

#[test]
fn good_scenario_runs_and_prints_json() {
    let p = scenario("good.toml", GOOD);
    let (code, out, err) = vmlab(&["run", &p, "--json", "-"]);
    assert_eq!(code, 0, "stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["schema"], "vmlab.run/1");
    assert!(v["vmstat"]["pgfault"].as_u64().unwrap_or(0) >= 2048);
}

#[test]
fn unknown_key_names_the_nearest_valid_one() {
    let p = scenario("typo.toml", &GOOD.replace("memory = ", "memroy = "));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("typo.toml:3:1"), "{err}");
    assert!(err.contains("memory"), "{err}");
}

#[test]
fn bad_size_unit_points_at_the_value() {
    let p = scenario("unit.toml", &GOOD.replace("\"64MiB\"", "\"64MiX\""));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("unit.toml:3:10"), "{err}");
}

#[test]
fn program_syntax_error_has_line_and_column() {
    let p = scenario("prog.toml", &GOOD.replace("touch a write", "tuch a write"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("prog.toml:10:1"), "{err}");
    assert!(err.contains("touch"), "should suggest `touch`: {err}");
}

#[test]
fn runtime_error_points_into_the_program() {
    let p = scenario("rt.toml", &GOOD.replace("touch a write", "touch b write"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("rt.toml:10:"), "{err}");
    assert!(err.contains("no mapping named `b`"), "{err}");
}

#[test]
fn unknown_profile_and_tunable_are_clear_errors() {
    let p = scenario("prof.toml", GOOD);
    let (code, _, err) = vmlab(&["run", &p, "--profile", "linux-6.9"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("vmlab: --profile linux-6.9: unknown profile `linux-6.9`; did you mean `linux-6.8`?"),
        "{err}"
    );
    let (code, _, err) = vmlab(&["run", &p, "--set", "vm.swapiness=10"]);
    assert_eq!(code, 2);
    assert!(err.contains("--set vm.swapiness=10: unknown knob `vm.swapiness`; did you mean `vm.swappiness`?"), "{err}");
    let (code, _, err) = vmlab(&["run", &p, "--set", "profile=linux-2.6.3"]);
    assert_eq!(code, 2);
    assert!(err.contains("--set profile=linux-2.6.3: unknown profile `linux-2.6.3`; did you mean"), "{err}");
}

/// A bad `[vm]`/`[reclaim]` value is blamed on where it was written: the `--set` argument, or
/// the file's line and column.
#[test]
fn knob_errors_point_at_the_set_or_the_file_line() {
    let p = scenario("knob.toml", &GOOD.replace("[[process]]", "[vm]\nswappiness = 300\n\n[[process]]"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "knob.toml:7:14: `vm.swappiness` = 300 is out of range: linux-6.8 models Linux 6.8, where it is 0–200 \
             (0–100 from 2.6.0, 0–200 from 5.8)"
        ),
        "{err}"
    );
    let (code, _, err) = vmlab(&["run", &p, "--set", "vm.swappiness=150", "--profile", "linux-2.6.36"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "--set vm.swappiness=150: `vm.swappiness` = 150 is out of range: linux-2.6.36 models Linux 2.6.36, \
             where it is 0–100 (0–100 from 2.6.0, 0–200 from 5.8)"
        ),
        "{err}"
    );
    let (code, _, err) = vmlab(&["run", &p, "--set", "vm.swappiness=150", "--set", "vm.watermark_scale_factor=5000"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "--set vm.watermark_scale_factor=5000: `vm.watermark_scale_factor` = 5000 is out of range: linux-6.8 \
             models Linux 6.8, where it is 1–3000 (1–1000 from 4.6, 1–3000 from 5.17)"
        ),
        "{err}"
    );
    let (code, _, err) = vmlab(&["run", &p, "--set", "vm.swappiness=60", "--set", "vm.dirty_ratio=lots"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--set vm.dirty_ratio=lots: `vm.dirty_ratio` expects a non-negative integer, found \"lots\""),
        "{err}"
    );
}

/// A knob the engine never reads is refused, whichever order `--set profile=` comes in: the
/// final profile's engine decides.
#[test]
fn knobs_the_final_engine_does_not_read_are_refused() {
    let p = scenario("engine.toml", GOOD);
    for order in [
        ["reclaim.objrmap_walk=true", "profile=linux-2.4.23aa1"],
        ["profile=linux-2.4.23aa1", "reclaim.objrmap_walk=true"],
    ] {
        let (code, _, err) = vmlab(&["run", &p, "--set", order[0], "--set", order[1]]);
        assert_eq!(code, 0, "{order:?}: {err}");
    }
    let (code, _, err) = vmlab(&["run", &p, "--set", "reclaim.objrmap_walk=true", "--set", "profile=linux-6.8"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "--set reclaim.objrmap_walk=true: `reclaim.objrmap_walk` is not read by the modern engine, which \
             linux-6.8 runs (read by: aa24); the nearest knob it reads is `reclaim.memmap_goal_high`"
        ),
        "{err}"
    );
    // `--profile` overrides the scenario's, and is the engine that counts.
    let (code, _, err) = vmlab(&[
        "run",
        &p,
        "--set",
        "reclaim.objrmap_walk=true",
        "--profile",
        "linux-2.4.23aa2",
        "--set",
        "profile=linux-6.8",
    ]);
    assert_eq!(code, 0, "{err}");
    // Switching the engine makes its own knobs settable.
    let (code, _, err) =
        vmlab(&["run", &p, "--set", "reclaim.kswapd_ignore_failure=true", "--set", "reclaim.engine=riel24"]);
    assert_eq!(code, 0, "{err}");
}

/// `vmlab reproduce` takes `PROFILE:KEY=VALUE` for a knob only some of its runs read, refuses
/// it unscoped (naming the scoped form) or scoped to a profile the seed does not run, before
/// any run starts; `vmlab run`, with one profile, says to drop the scope.
#[test]
fn reproduce_scopes_a_set_to_one_profile() {
    let (code, _, err) = vmlab(&["reproduce", "google-mlock", "--set", "reclaim.bdflush=true"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "--set reclaim.bdflush=true: `reclaim.bdflush` is not read by the modern engine, which linux-6.8 runs"
        ) && err.contains(
            "scope it: --set linux-2.4.9:reclaim.bdflush=true --set linux-2.4.9-phillips:reclaim.bdflush=true"
        ),
        "{err}"
    );
    let (code, _, err) = vmlab(&["reproduce", "000", "--set", "linux-2.6.38:reclaim.bdflush=true"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("vmlab reproduce google-mlock runs no `linux-2.6.38`; its profiles are linux-2.4.9, linux-2.4.9-phillips, linux-6.8"),
        "{err}"
    );
    let (code, _, err) = vmlab(&["reproduce", "000", "--set", "linux-6.8:vm.bdflush_nfract=40"]);
    assert_eq!(code, 2);
    assert!(err.contains("`vm.bdflush_nfract` is not read by the modern engine"), "{err}");
    let (code, _, err) = vmlab(&["run", &scenario("scoped.toml", GOOD), "--set", "linux-6.8:vm.swappiness=10"]);
    assert_eq!(code, 2);
    assert!(err.contains("this run has one profile: write `--set vm.swappiness=10`"), "{err}");
}

#[test]
fn set_of_an_undeclared_variable_suggests_the_declared_one() {
    let text = GOOD.replace("[[process]]", "[vars]\nthreads = 1\n\n[[process]]");
    let p = scenario("vars.toml", &text);
    let (code, _, err) = vmlab(&["run", &p, "--set", "vars.thread=16"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--set vars.thread=16: the scenario declares no variable `thread`; did you mean `threads`?"),
        "{err}"
    );
    assert!(err.contains("help: the scenario's [vars]: threads"), "{err}");
    let (code, _, err) = vmlab(&["run", &p, "--set", "vars.threads=2"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = vmlab(&["run", &scenario("novars.toml", GOOD), "--set", "vars.n=2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--set vars.n=2: the scenario declares no variable `n`"), "{err}");
    assert!(err.contains("help: the scenario has no [vars]"), "{err}");
}

/// The `k=v` pairs of one labelled group of a `vmlab profiles` block, wrapped lines included.
fn shown_pairs(block: &str, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for line in block.lines().skip(1) {
        let t = line.trim_start();
        if let Some((l, rest)) = t.split_once(": ") {
            if !l.contains('=') && !l.contains(' ') || l == "unread or absent" {
                on = l == label;
                if on {
                    out.extend(rest.split_whitespace().map(String::from));
                }
                continue;
            }
        }
        if on && line.starts_with("      ") {
            out.extend(t.split_whitespace().map(String::from));
        }
    }
    out
}

/// Every value `vmlab profiles` shows can be given back with `--set` and changes nothing; the
/// ones it lists as unread or absent are refused.
#[test]
fn every_shown_value_sets_back_through_the_command_line() {
    let p = scenario("setback.toml", GOOD);
    let (code, names, _) = vmlab(&["profiles", "--json"]);
    assert_eq!(code, 0);
    let all: serde_json::Value = serde_json::from_str(&names).expect("JSON");
    for prof in all.as_array().expect("array") {
        let name = prof["name"].as_str().expect("name");
        let (code, block, _) = vmlab(&["profiles", name]);
        assert_eq!(code, 0);
        let mut args = vec!["run".to_string(), p.clone(), "--profile".into(), name.into()];
        let base = vmlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(base.0, 0, "{name}: {}", base.2);
        let mut n = 0;
        for section in ["reclaim", "vm"] {
            for kv in shown_pairs(&block, section) {
                args.push("--set".into());
                args.push(format!("{section}.{kv}"));
                n += 1;
            }
        }
        assert!(n > 30, "{name}: only {n} knobs shown");
        let again = vmlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again.0, 0, "{name}: {}", again.2);
        assert_eq!(again.1, base.1, "{name}: setting every shown value back changed the run");
        for kv in shown_pairs(&block, "unread or absent") {
            let (code, _, err) = vmlab(&["run", &p, "--profile", name, "--set", &kv]);
            assert_eq!(code, 2, "{name}: --set {kv} was taken");
            assert!(err.contains("is not read by the") || err.contains("does not exist before"), "{name}: {err}");
        }
    }
}

#[test]
fn profiles_shows_one_or_the_differences() {
    let (code, out, _) = vmlab(&["profiles", "linux-2.6.36"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("linux-2.6.36\n"), "{out}");
    assert!(out.contains("    models Linux 2.6.36; engine split2636\n"), "{out}");
    assert!(!out.contains("linux-6.8"), "{out}");
    let (code, out, _) = vmlab(&["profiles", "linux-2.6.36", "linux-2.6.38"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "                                  linux-2.6.36    linux-2.6.38");
    assert_eq!(lines[1], "version                           2.6.36          2.6.38");
    assert_eq!(lines[2], "reclaim.fault_locking             hold_across_io  retry");
    assert!(!out.contains("reclaim.engine"), "the engine is the same: {out}");
    let (code, out, _) = vmlab(&["profiles", "linux-2.6.36", "linux-2.6.38", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["profiles"], serde_json::json!(["linux-2.6.36", "linux-2.6.38"]));
    assert_eq!(
        v["differ"][1],
        serde_json::json!({ "key": "reclaim.fault_locking", "values": ["hold_across_io", "retry"] })
    );
    let (code, out, _) = vmlab(&["profiles", "linux-6.8", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["name"], "linux-6.8");
    assert_eq!(v["version"], "6.8");
    let (code, out, err) = vmlab(&["profiles", "linux-2.6.63"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with(
            "vmlab profiles: unknown profile `linux-2.6.36`"
                .replace("36`", "63`; did you mean `linux-2.6.36`?")
                .as_str()
        ),
        "{err}"
    );
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let (code, _, err) = vmlab(&["run", "/nonexistent/x.toml"]);
    assert_eq!(code, 2);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn compare_rejects_bad_json() {
    let p = scenario("bad.json", "{ not json");
    let (code, _, err) = vmlab(&["compare", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json"), "{err}");
}

#[test]
fn profiles_lists_the_modern_profile() {
    let (code, out, _) = vmlab(&["profiles"]);
    assert_eq!(code, 0);
    assert!(out.contains("linux-6.8"));
}

/// The text listing shows every field of every profile that `--json` has, so a field added to
/// the table cannot go missing from what a reader sees.
#[test]
fn profiles_text_shows_every_json_field() {
    let (code, text, _) = vmlab(&["profiles"]);
    assert_eq!(code, 0);
    let (code, json, _) = vmlab(&["profiles", "--json"]);
    assert_eq!(code, 0);
    let all: serde_json::Value = serde_json::from_str(&json).expect("profiles --json is JSON");
    let profiles = all.as_array().expect("an array of profiles");
    assert!(profiles.len() >= 9);
    let blocks: Vec<&str> = text.split("\n\n").collect();
    for p in profiles {
        let name = p["name"].as_str().expect("name");
        let block = blocks.iter().find(|b| b.starts_with(name) && b[name.len()..].starts_with('\n')).expect(name);
        let mut keys = Vec::new();
        for (k, v) in p.as_object().expect("object") {
            match v.as_object() {
                Some(inner) => keys.extend(inner.keys().cloned()),
                None if k != "name" && k != "summary" && k != "version" => keys.push(k.clone()),
                None => {}
            }
        }
        for k in keys {
            // `k=v` under its table's label, or `vm.k=v` among the knobs the row refuses.
            let shown = block.contains(&format!(" {k}=")) || block.contains(&format!(".{k}="));
            assert!(shown, "{name}: `{k}` missing from `vmlab profiles`");
        }
    }
}

#[test]
fn same_scenario_gives_byte_identical_output_unless_timing_is_asked_for() {
    let p = scenario("same.toml", GOOD);
    let a = vmlab(&["run", &p]);
    let b = vmlab(&["run", &p]);
    assert_eq!(a.0, 0, "stderr: {}", a.2);
    assert_eq!(a.1, b.1, "text output differs between two identical runs");
    let ja = vmlab(&["run", &p, "--json", "-"]);
    let jb = vmlab(&["run", &p, "--json", "-"]);
    assert_eq!(ja.1, jb.1, "JSON differs between two identical runs");
    let t = vmlab(&["run", &p, "--timing", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&t.1).expect("valid JSON");
    assert!(v["wall_s"].as_f64().unwrap_or(0.0) > 0.0, "--timing records wall_s");
    assert!(t.2.contains("s wall"), "--timing prints a timing line on stderr: {}", t.2);
}

#[test]
fn explain_names_what_kept_kswapd_awake() {
    // A file twice the size of memory, read twice: page-cache reclaim keeps kswapd busy.
    let stream = GOOD
        .replace(
            "cpus = 1\n",
            "cpus = 1\n\n[[disk]]\nname = \"sda\"\nmodel = \"ssd\"\n\n[[file]]\nname = \"big\"\nsize = \"128MiB\"\n",
        )
        .replace("mmap a anon 8MiB\ntouch a write", "read big bs=1MiB\nread big bs=1MiB");
    let p = scenario("explain.toml", &stream);
    let (code, out, err) = vmlab(&["explain", &p]);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("kswapd: "), "{out}");
    assert!(out.contains("pgdat_balanced(): no zone up to"), "6.8's kswapd reason missing:\n{out}");
    assert!(out.contains("mmap_sem: "), "{out}");
    let (code, _, err) = vmlab(&["explain", &scenario("bad.toml", &GOOD.replace("memory = ", "memroy = "))]);
    assert_eq!(code, 2);
    assert!(err.contains("memroy"), "{err}");
}

/// `run --host` on a fixture host (VMLAB_HOST_ROOT): the machine is the host's, the workload runs
/// in a group limited to the scenario's memory, and a host smaller than the scenario is refused.
#[test]
fn run_host_builds_the_machine_from_the_host_and_limits_the_workload() {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vmlab-host-{}", std::process::id()));
    for (f, text) in [
        ("proc/meminfo", "MemTotal:         262144 kB\n"),
        ("sys/devices/system/cpu/online", "0-1\n"),
        ("proc/sys/vm/swappiness", "100\n"),
        ("sys/block/vda/queue/read_ahead_kb", "512\n"),
        // The measured device's queue (a directory here; a symlink into sys/devices on a host).
        ("sys/dev/block/254:0/queue/max_sectors_kb", "1024\n"),
        ("sys/dev/block/254:0/queue/max_segments", "64\n"),
        ("sys/dev/block/254:0/queue/nr_requests", "64\n"),
        ("sys/dev/block/254:0/queue/scheduler", "[none] mq-deadline\n"),
        (
            "vmlab-host-disk.json",
            r#"{"schema": "vmlab.host-disk/3", "dir": "/var/tmp", "device": "254:0", "kernel": "6.18",
               "chunk_bytes": 4194304, "read_4k_ns": 50000, "read_chunk_ns": 4050000,
               "write_chunk_ns": 4500000, "iops_at_depth": 160000, "depth": 32,
               "device_bps": 1200000000}"#,
        ),
        ("vmlab-host-costs.json", r#"{"schema": "vmlab.host-costs/1", "cost": {"fault": 2100}}"#),
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let p = scenario("host.toml", GOOD);
    let run = |args: &[&str]| {
        let out = vmlab_cmd().env("VMLAB_HOST_ROOT", &root).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["run", "--host", &p, "--json", "-"]);
    assert_eq!(code, Some(0), "stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["machine"]["memory_bytes"], 256u64 << 20);
    // The host's other writers' dirty pages are the host's: more than the scenario's memory is
    // taken, more than the host's is refused with the loader's error.
    let (code, _, err) = run(&["run", "--host", &p, "--set", "machine.foreign_dirty=100MiB", "--json", "/dev/null"]);
    assert_eq!(code, Some(0), "stderr: {err}");
    let (code, _, err) = run(&["run", "--host", &p, "--set", "machine.foreign_dirty=300MiB", "--json", "/dev/null"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("do not fit in the machine's 268435456"), "{err}");
    assert_eq!(v["machine"]["cpus"], 2);
    let g = &v["cgroups"][0];
    assert_eq!(g["name"], "vmlab-real");
    assert_eq!(g["files"]["memory.limit_in_bytes"], 64u64 << 20, "the scenario's machine.memory");
    assert!(g["stat"]["pgfault"].as_u64().unwrap_or(0) >= 2048, "the workload ran inside: {g}");
    assert!(host_sets(&v).contains("vm.swappiness=100 vm.read_ahead_kb=512"));
    let disk = v["notes"]["host_disk"].as_str().unwrap();
    // The 4 MiB write's 4,500 us less the read's latency is its transfer.
    assert!(disk.contains("bandwidth=1047552000B/s write_bandwidth=941712787B/s latency=46090ns spindles=8"), "{disk}");
    assert!(disk.contains("device_bandwidth=1200000000B/s"), "{disk}");
    // A `/3` measurement has no writes at depth: the writes keep the read ceiling, and it says so.
    assert!(
        disk.contains("no writes at depth (an older measurement") && disk.ends_with("device_write_bandwidth=0B/s"),
        "{disk}"
    );
    let host = host_sets(&v);
    assert!(host.starts_with("machine.cost.fault=2100ns "), "the calibration first: {host}");
    assert!(v["notes"]["host_costs"].as_str().unwrap().starts_with("calibrated"));
    // The queue's limits with the disk, before the command line's `--set`s (which then win);
    // then `vmlab real`'s own reads of its group's memory.stat, every poll (20 ms) and the
    // loop's work after it.
    assert!(
        host.contains(
            "chunk = 4194304, device_write_bandwidth = \"0B/s\", write_completion_latency = \"0ns\" }] vm.max_sectors_kb=1024 vm.max_segments=64 disk.sda.nr_requests=64 \
             disk.sda.scheduler=\"none\" reclaim.memcg_stat_poll_ms=20 reclaim.memcg_stat_poll_work_us=250 machine.memory="
        ),
        "{host}"
    );
    let queue = v["notes"]["host_queue"].as_str().unwrap();
    assert!(queue.contains("writeback throttle: nr_requests 64,"), "{queue}");
    assert!(queue.ends_with("scheduler none (disk.*)"), "{queue}");
    assert!(host.contains("disk.sda.nr_requests=64"), "the writeback throttle's depth: {host}");
    assert!(host.contains("disk=[{ name = \"sda\", model = \"nvme\", bandwidth = \"1047552000B/s\""), "{host}");
    // The measured disk serves the scenario's, and the command line's `--set disk.*` wins over it.
    let reader = "[machine]\nmemory = \"64MiB\"\n\n[[disk]]\nname = \"sda\"\nmodel = \"hdd\"\n\n\
                  [[file]]\nname = \"f\"\nsize = \"8MiB\"\n\n[[process]]\nname = \"r\"\nprogram = 'read f'\n";
    let disk = scenario("host-disk.toml", reader);
    let elapsed = |extra: &[&str]| {
        let (code, out, err) = run(&[&["run", "--host", &disk, "--json", "-"], extra].concat());
        assert_eq!(code, Some(0), "stderr: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        let sets = host_sets(&v);
        assert!(sets.contains("disk.sda.latency=\"46090ns\""), "{}", v["params"]);
        assert!(sets.contains("disk.sda.write_bandwidth=\"941712787B/s\""), "{}", v["params"]);
        // The stat file's times and where the reader's time went, as `vmlab real` has them:
        // at 50 ms a read, every read request's ticks hold the latency, and the reader's wait
        // blocked on I/O is part of them.
        let d = &v["disks"][0];
        let (reads, ticks) = (d["read_ios"].as_u64().unwrap(), d["times"]["read_ticks"].as_u64().unwrap());
        let m = &v["metrics"];
        let wait = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("metrics.{k}: {m}"));
        if extra.is_empty() {
            assert!(ticks < reads, "~0.1 ms a request: {ticks} ms for {reads}");
        } else {
            assert!(ticks >= 50 * reads, "{ticks} ms for {reads} reads");
            // Async readahead overlaps most of them with the reading: at least one is waited.
            let io = wait("wait_io_s");
            assert!(io >= 0.05 && io <= ticks as f64 / 1000.0 + 0.001, "{io} s waited, {ticks} ms of reads: {m}");
        }
        let total =
            wait("sys_s") + ["wait_io_s", "wait_reclaim_s", "wait_other_s", "wait_cpu_s"].map(wait).iter().sum::<f64>();
        let done = v["elapsed_s"].as_f64().unwrap();
        assert!(total <= done + 1e-6 && total > 0.9 * done, "CPU and waits {total} s of {done} s: {m}");
        done
    };
    let (fast, slow) = (elapsed(&[]), elapsed(&["--set", "disk.sda.latency=50ms"]));
    assert!(fast < 0.05, "8 MiB from the measured disk (1 GB/s), not the hdd: {fast} s");
    assert!(slow > fast + 0.05, "--set disk.sda.latency=50ms ignored: {slow} s against {fast} s");
    let (code, _, err) = run(&["run", "--host", &p, "--set", "machine.memory=1GiB"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("do not fit in this host's"), "{err}");
    // The host's other writers' dirty pages: a moment figure, on a root disk of their own.
    std::fs::write(root.join("proc/meminfo"), "MemTotal:         262144 kB\nDirty:   2048 kB\n").unwrap();
    let (code, out, err) = run(&["run", "--host", &disk, "--json", "-"]);
    assert_eq!(code, Some(0), "stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert!(host_sets(&v).contains("machine.foreign_dirty=2097152"), "{}", v["params"]);
    assert_eq!(v["disks"].as_array().map(Vec::len), Some(2), "the scenario's sda and host-root: {}", v["disks"]);
    let _ = std::fs::remove_dir_all(&root);
}

/// `run --host`'s `params.host`, the host's `--set`s, joined as they were given.
fn host_sets(v: &serde_json::Value) -> String {
    let sets = v["params"]["host"].as_array().expect("params.host is a list");
    sets.iter().map(|x| x.as_str().expect("a --set")).collect::<Vec<_>>().join(" ")
}
