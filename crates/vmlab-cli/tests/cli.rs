//! The `vmlab` command: bad input exits 2 with `file:line:col` and what was expected; good input
//! runs and its JSON parses.

use std::process::Command;

fn vmlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vmlab")).args(args).output().expect("vmlab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        unwrap_lines(&String::from_utf8_lossy(&out.stderr)),
    )
}

/// miette wraps a long message at the terminal's width behind a `│` gutter; the tests look for
/// phrases, so join the lines back.
fn unwrap_lines(err: &str) -> String {
    let parts: Vec<&str> = err.lines().map(|l| l.trim_start_matches(|c: char| c.is_whitespace() || c == '│')).collect();
    parts.join(" ")
}

fn scenario(name: &str, text: &str) -> String {
    // Under target/tmp (cargo gives integration tests that directory), not the shared /tmp.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("vmlab-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write scenario");
    p.to_string_lossy().into_owned()
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
    let (code, _, err) = vmlab(&["run", &p, "--profile", "linux-9.9"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown profile `linux-9.9`"), "{err}");
    let (code, _, err) = vmlab(&["run", &p, "--set", "vm.swapiness=10"]);
    assert_eq!(code, 2);
    assert!(err.contains("vm.swappiness"), "{err}");
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
                None if k != "name" && k != "summary" => keys.push(k.clone()),
                None => {}
            }
        }
        for k in keys {
            assert!(block.contains(&format!(" {k}=")), "{name}: `{k}` missing from `vmlab profiles`");
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
