//! Never a panic, never a hang, never lost output: the reliability audit's reproducers (issue 19),
//! each run through the `vmlab` binary. Every one must end quickly with a clear status.

use std::process::Stdio;

use crate::common::{scratch_dir, status_and_text, vmlab_cmd, write_file};

/// Errors are drawn as on a terminal (VMLAB_ERRORS=graphical): miette's drawing is where a
/// diagnostic can panic (a padding width past 65535), so that is the form these tests hold.
fn vmlab_with(args: &[&str], stdout: Stdio) -> (i32, String, String) {
    let (code, out, err) = status_and_text(
        &vmlab_cmd().args(args).env("VMLAB_ERRORS", "graphical").stdout(stdout).output().expect("vmlab runs"),
    );
    // miette wraps a long message behind a `│` gutter; the tests look for phrases.
    let err = err
        .lines()
        .map(|l| l.trim_start_matches(|c: char| c.is_whitespace() || c == '│'))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!err.contains("panicked"), "vmlab {args:?} panicked: {err}");
    (code, out, err)
}

fn vmlab(args: &[&str]) -> (i32, String, String) {
    vmlab_with(args, Stdio::piped())
}

/// Standard output on /dev/full: every write fails with ENOSPC.
fn full() -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full"))
}

fn dir() -> std::path::PathBuf {
    scratch_dir("vmlab-reliability")
}

fn scenario(name: &str, text: &str) -> String {
    write_file(&dir(), name, text)
}

const GOOD: &str = r#"
[machine]
memory = "64MiB"
cpus = 1

[[process]]
name = "p"
program = '''
mmap a anon 1MiB
touch a write
'''
"#;

#[test]
fn a_full_stdout_is_an_error_not_a_panic_or_success() {
    let p = scenario("full.toml", GOOD);
    for args in [
        vec!["profiles"],
        vec!["profiles", "--json"],
        vec!["reproduce", "--list"],
        vec!["run", &p],
        vec!["run", &p, "--json", "-"],
        vec!["explain", &p],
        vec!["reproduce", "mmap-sem"],
    ] {
        let (code, _, err) = vmlab_with(&args, full());
        assert_eq!(code, 1, "vmlab {args:?}: {err}");
        assert!(err.contains("cannot write to standard output"), "vmlab {args:?}: {err}");
    }
}

#[test]
fn interval_out_of_bounds_is_refused_before_the_run() {
    let p = scenario("interval.toml", GOOD);
    for (i, what) in
        [("1e20", "longer than a year"), ("1e-5", "finest interval"), ("-1", "positive"), ("NaN", "positive")]
    {
        let (code, _, err) = vmlab(&["run", &p, &format!("--interval={i}")]);
        assert_eq!(code, 2, "--interval {i}: {err}");
        assert!(err.contains(what), "--interval {i}: {err}");
    }
    // `vmlab real` checks it before it needs root or a cgroup.
    let (code, _, err) = vmlab(&["real", &p, "--interval", "1e20"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("longer than a year"), "{err}");
    // 0.001 s over the default 24 h limit is 86.4 million samples.
    let (code, _, err) = vmlab(&["run", &p, "--interval", "0.001"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("timeline samples"), "{err}");
    let (code, _, err) = vmlab(&["run", &p, "--interval", "0.001", "--set", "duration=60s"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_timeline_too_long_for_memory_is_a_positioned_error() {
    let p = scenario("timeline.toml", &format!("interval = \"1ms\"\nlinger = \"1h\"\n{GOOD}"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("timeline.toml:1:12"), "{err}");
    assert!(err.contains("timeline samples"), "{err}");
}

#[test]
fn output_files_are_checked_before_the_run() {
    let p = scenario("out.toml", GOOD);
    let before = std::fs::read_to_string(&p).unwrap();
    let (code, _, err) = vmlab(&["run", &p, "--json", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to overwrite"), "{err}");
    let (code, _, err) = vmlab(&["run", &p, "--csv", &p]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), before, "the scenario was changed");
    let missing = dir().join("no/such/dir/out.json");
    let (code, _, err) = vmlab(&["run", &p, "--json", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be created"), "{err}");
    let d = dir();
    let (code, _, err) = vmlab(&["run", &p, "--csv", d.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let same = dir().join("same.out");
    let (code, _, err) = vmlab(&["run", &p, "--json", same.to_str().unwrap(), "--csv", same.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(!same.exists(), "nothing is created by the check");
    let (code, _, err) = vmlab(&["reproduce", "google-mlock", "--json", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be created"), "{err}");
    let (code, _, err) = vmlab(&["real", &p, "--json", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to overwrite"), "{err}");
    // A good destination still works, and the probe file is gone.
    let ok = dir().join("ok.json");
    let (code, _, err) = vmlab(&["run", &p, "--json", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(ok.exists());
    assert!(!std::fs::read_dir(dir()).unwrap().flatten().any(|e| e.file_name().to_string_lossy().contains("probe")));
}

/// A line of `mark` + 65,531 `x` + ` bad`: the column of `bad` is past 65535, the largest width
/// Rust's formatting takes (miette pads to the label's column).
#[test]
fn errors_on_very_long_lines_print_plainly() {
    let long = format!("mark {} bad", "x".repeat(65_531));
    let p = scenario("long.toml", &GOOD.replace("touch a write", &long));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("long.toml:10:65538"), "{err}");
    // In TOML: an unknown key far along a line.
    let p = scenario("longkey.toml", &format!("[machine]\nmemory = \"64MiB\"\n{} = 1\n", "k".repeat(70_000)));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    // In a `--set` program.
    let p = scenario("set.toml", GOOD);
    let set = format!("process.p.program=mmap a anon 1M; {long}");
    let (code, _, err) = vmlab(&["run", &p, "--set", &set]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--set"), "{err}");
    // A short line keeps miette's snippet.
    let p = scenario("short.toml", &GOOD.replace("touch a write", "mark x bad"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("[") && err.contains("short.toml:10:"), "{err}");
}

#[test]
fn storage_beyond_what_the_simulator_holds_is_refused_with_its_position() {
    let cases = [
        ("[swap]\nsize = \"16TiB\"\n", "swap.toml:2:8", "1 TiB"),
        ("[[file]]\nname = \"f\"\nsize = 9223372036854775807\n", "file.toml:3:8", "1 TiB"),
        ("[[file]]\nname = \"f{i}\"\ncount = 2000000\nsize = 1\n", "count.toml:3:9", "1000000"),
        ("[[filetree]]\nname = \"t\"\ntotal = \"1GiB\"\nmean = \"1\"\n", "tree.toml:4:8", "1000000"),
    ];
    for (i, (extra, at, what)) in cases.iter().enumerate() {
        let name = at.split(':').next().unwrap();
        let p = scenario(name, &format!("{extra}{GOOD}"));
        let (code, _, err) = vmlab(&["run", &p]);
        assert_eq!(code, 2, "case {i}: {err}");
        assert!(err.contains(at) && err.contains(what), "case {i}: {err}");
    }
    // The same sizes at run time.
    for (op, at) in [("create big size=9223372036854775807", "rtcreate.toml"), ("write f len=2TiB", "rtwrite.toml")] {
        let text = format!(
            "[machine]\nmemory = \"64MiB\"\n[[file]]\nname = \"f\"\nsize = \"1MiB\"\n[[process]]\nname = \"p\"\nprogram = '''\n{op}\n'''\n"
        );
        let p = scenario(at, &text);
        let (code, _, err) = vmlab(&["run", &p]);
        assert_eq!(code, 2, "{op}: {err}");
        assert!(err.contains(&format!("{at}:9:1")) && err.contains("1 TiB"), "{op}: {err}");
    }
}

#[test]
fn tiny_zones_are_refused() {
    let p = scenario("zones.toml", &GOOD.replace("cpus = 1", "cpus = 1\nzones = { Normal = \"4KiB\" }"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("zones.toml:5:20") && err.contains("at least 1 MiB"), "{err}");
    let p =
        scenario("zones2.toml", &GOOD.replace("cpus = 1", "cpus = 1\nzones = { DMA = \"1MiB\", Normal = \"8MiB\" }"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("16 MiB per node"), "{err}");
    let p =
        scenario("zones3.toml", &GOOD.replace("cpus = 1", "cpus = 1\nzones = { DMA = \"16MiB\", Normal = \"16MiB\" }"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn long_operator_chains_are_an_error_not_a_stack_overflow() {
    for op in ["+", "*", "&&"] {
        let chain = vec!["1"; 40_000].join(&format!(" {op} "));
        // In dead code after `exit`, too: it is parsed all the same.
        let p = scenario("chain.toml", &GOOD.replace("touch a write", &format!("exit\nlet x = {chain}")));
        let (code, _, err) = vmlab(&["run", &p]);
        assert_eq!(code, 2, "{op}: {err}");
        assert!(err.contains("expression too deep") && err.contains("chain.toml:11:"), "{op}: {err}");
    }
    let chain = vec!["1"; 500].join(" + ");
    let p = scenario("chain-ok.toml", &GOOD.replace("touch a write", &format!("let x = {chain}")));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_loop_that_does_nothing_ends_with_a_positioned_error() {
    for (body, at) in [
        // The loop itself has the position when nothing in its body has one.
        ("loop { }", "noop.toml:10:1"),
        ("loop { let x = 1 }", "noop.toml:10:"),
        ("let x = 0\nfor i in 0..1000000000000 { x += 1 }", "noop.toml:11:"),
    ] {
        let p = scenario("noop.toml", &GOOD.replace("touch a write", body));
        let t = std::time::Instant::now();
        let (code, _, err) = vmlab(&["run", &p, "--set", "duration=10s"]);
        assert_eq!(code, 2, "{body}: {err}");
        assert!(err.contains("steps without an operation"), "{body}: {err}");
        assert!(err.contains(at) && err.contains("process `p`"), "{body}: {err}");
        assert!(t.elapsed().as_secs() < 60, "{body} took {:?}", t.elapsed());
    }
}

fn vmlab_stderr(args: &[&str], stderr: Stdio) -> std::process::Output {
    vmlab_cmd().args(args).stdout(Stdio::null()).stderr(stderr).output().expect("runs")
}

#[test]
fn a_full_standard_error_does_not_panic() {
    let p = scenario("stderr-full.toml", "[machine]\nmemroy = 1\n");
    let out = vmlab_stderr(&["run", &p], full());
    assert_eq!(out.status.code(), Some(2), "an error still exits 2 with nowhere to say it");
    let good = scenario("stderr-full-good.toml", GOOD);
    let out = vmlab_stderr(&["run", &good, "--timing"], full());
    assert_eq!(out.status.code(), Some(0), "a timing line lost on stderr is no failure");
}

#[test]
fn a_datetime_is_refused_where_it_is_and_positions_elsewhere_survive() {
    let p = scenario("datetime.toml", &format!("{GOOD}\n[vars]\nwhen = 1979-05-27T07:32:00Z\n"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("datetime.toml:14:8"), "{err}");
    assert!(err.contains("date or time"), "{err}");
    // A --set value that reads as a date is text, refused as the field's text with the set named.
    let good = scenario("datetime-set.toml", GOOD);
    let (code, _, err) = vmlab(&["run", &good, "--set", "duration=07:32:00"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--set duration=07:32:00"), "{err}");
}

#[test]
fn invalid_utf8_is_refused_at_the_first_bad_byte() {
    let p = dir().join("utf8.toml");
    std::fs::write(&p, b"[machine]\nmemory = \"64MiB\"\ncpus = \xff1\n").expect("write");
    let (code, _, err) = vmlab(&["run", &p.to_string_lossy()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("utf8.toml:3:8"), "{err}");
    assert!(err.contains("not valid UTF-8"), "{err}");
}

#[test]
fn run_time_faults_name_the_operation() {
    for (name, program, at) in [
        ("segv.toml", "mmap a anon 1MiB\nmunmap a\ntouch a write", "segv.toml:11:1"),
        ("empty.toml", "create f size=0\nmmap m file=f 4K\ntouch m", "empty.toml:11:1"),
    ] {
        let text = GOOD.replace("mmap a anon 1MiB\ntouch a write", program);
        let p = scenario(name, &text);
        let (code, _, err) = vmlab(&["run", &p]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(at), "{name}: {err}");
    }
}

#[test]
fn machine_bounds_found_in_the_layout_are_positioned() {
    let p = scenario("small.toml", &GOOD.replace("64MiB", "8MiB"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("small.toml:3:10"), "{err}");
    let p = scenario("nodes.toml", &GOOD.replace("cpus = 1", "cpus = 1\nnodes = 8"));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nodes.toml:3:10"), "{err}");
}

#[test]
#[cfg(unix)]
fn an_interrupted_run_writes_what_it_has_and_exits_130() {
    let p = scenario(
        "long.toml",
        "duration = \"1h\"\ninterval = \"1s\"\n[machine]\nmemory = \"256MiB\"\ncpus = 2\n[[process]]\nname = \"p\"\nprogram = '''\nmmap a anon 64MiB\nloop { touch a write; sleep 1ms }\n'''\n",
    );
    let json = dir().join("interrupted.json");
    let _ = std::fs::remove_file(&json);
    let child = vmlab_cmd()
        .args(["run", &p, "--json", &json.to_string_lossy()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill(2) on the child's own pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON was written"))
        .expect("the JSON is complete");
    let at = doc["params"]["interrupted_at_s"].as_f64().expect("params.interrupted_at_s");
    assert!(at > 0.0 && at < 3600.0, "{at}");
    assert!(!doc["timeline"].as_array().expect("a timeline").is_empty());
    assert!(String::from_utf8_lossy(&out.stdout).contains("vmstat"), "the text report follows");
}
