//! The command as a tool: plain one-line errors when nobody is at a terminal, seeds built into
//! the binary and found by number, completions and a man page, and `compare` as MMTests does it.

use std::path::{Path, PathBuf};

use crate::common::{scratch_dir, status_and_text, vmlab_cmd, write_file};

fn tmp(name: &str) -> PathBuf {
    scratch_dir("vmlab-tool-test").join(name)
}

/// `vmlab ARGS` run in `dir` without $VMLAB_ROOT: (status, stdout, stderr), stderr a pipe.
fn vmlab_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    status_and_text(&vmlab_cmd().args(args).current_dir(dir).env_remove("VMLAB_ROOT").output().expect("vmlab runs"))
}

fn vmlab(args: &[&str]) -> (i32, String, String) {
    vmlab_in(Path::new(env!("CARGO_TARGET_TMPDIR")), args)
}

const SMALL: &str = r#"
[machine]
memory = "64MiB"
cpus = 1

[vars]
threads = 1

[[process]]
name = "p"
program = '''
mmap a anon 8MiB
touch a write
'''
"#;

fn small(name: &str, text: &str) -> String {
    write_file(&scratch_dir("vmlab-tool-test"), name, text)
}

#[test]
fn piped_errors_are_one_line_with_position_and_a_help_line() {
    let p = small("typo.toml", &SMALL.replace("memory = ", "memroy = "));
    let (code, _, err) = vmlab(&["run", &p]);
    assert_eq!(code, 2);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("{p}:3:1: ")), "{err}");
    assert!(!err.contains('×') && !err.contains('╭') && !err.contains("vmlab::scenario"), "{err}");
    assert!(err.lines().skip(1).all(|l| l.starts_with("  help: ")), "{err}");
    // A bad --set names the --set, not the file.
    let (code, _, err) = vmlab(&["run", &small("vars.toml", SMALL), "--set", "vars.thread=16"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("--set vars.thread=16: "), "{err}");
    assert!(err.contains("did you mean `threads`?"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
}

/// `--duration` lengthens a seed's server history; where it cannot mean anything it is refused
/// before anything runs, with the reason.
#[test]
fn reproduce_duration_is_refused_where_it_means_nothing() {
    for (args, want) in [
        (&["reproduce", "mmap-sem", "--duration", "1h"][..], "this seed has none"),
        (&["reproduce", "kswapd-high-order", "--duration", "30s"], "at least 60s"),
        (&["reproduce", "kswapd-high-order", "--duration", "90.5s"], "whole seconds"),
        (&["reproduce", "kswapd-high-order", "--duration", "4"], "needs a unit"),
        (&["reproduce", "kswapd-high-order", "--duration", "4h", "--set", "duration=10s"], "leave out --set duration="),
    ] {
        let (code, out, err) = vmlab(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn seeds_run_from_anywhere_by_number_or_name() {
    // A directory with no scenarios/ anywhere above it: the seed's scenario is the built-in one.
    let dir = std::env::temp_dir().join(format!("vmlab-nowhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    assert!(!dir.ancestors().any(|a| a.join("scenarios/seeds").is_dir()));
    let args = ["--set", "vars.files=40", "--json", "-"];
    let (code, by_number, err) = vmlab_in(&dir, &[&["reproduce", "004"][..], &args].concat());
    assert_eq!(code, 0, "{err}");
    let (code, by_name, err) = vmlab_in(&dir, &[&["reproduce", "mmap-sem"][..], &args].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_number, by_name);
    let v: serde_json::Value = serde_json::from_str(&by_number).expect("JSON");
    assert_eq!(v["seed"], "mmap-sem");
    // The --set is recorded in every run's params, so compare can say what differed.
    assert!(v["runs"].as_array().expect("runs").iter().all(|r| r["params"]["vars.files"] == "40"), "{by_number}");
    let (code, _, err) = vmlab(&["reproduce", "999"]);
    assert_eq!(code, 2);
    assert!(err.contains("004 mmap-sem"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = vmlab(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("reproduce") && out.contains("compare"), "{shell}: {out}");
    }
    let (code, _, err) = vmlab(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = vmlab(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(".ie") || out.contains(".TH vmlab"), "{out}");
    assert!(out.contains("reproduce"), "{out}");
}

#[test]
fn compare_runs_repeats_labels_columns_and_writes_json() {
    let p = small("cmp.toml", SMALL);
    let args = ["compare", &p, "--profile", "linux-2.6.26", "--profile", "linux-6.8", "--repeat", "2"];
    let (code, text, err) = vmlab(&args);
    assert_eq!(code, 0, "{err}");
    let header = text.lines().next().unwrap_or_default();
    assert!(header.contains("linux-2.6.26") && header.contains("linux-6.8"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Amean ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Stddev ")), "{text}");
    assert!(text.contains("(lower is better)"), "{text}");
    let (code, json, err) = vmlab(&[&args[..], &["--json", "-"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["schema"], "vmlab.compare/1");
    assert_eq!(v["columns"], serde_json::json!(["linux-2.6.26", "linux-6.8"]));
    let elapsed = v["rows"].as_array().unwrap().iter().find(|r| r["name"] == "elapsed_s").expect("elapsed_s");
    assert_eq!(elapsed["columns"][1]["n"], 2);
    // Columns labelled by a --set that differs; different scenarios warn.
    let a = tmp("a.json");
    let b = tmp("b.json");
    let other = small("other.toml", &format!("name = \"other\"\n{SMALL}"));
    assert_eq!(vmlab(&["run", &p, "--set", "vars.threads=2", "--json", a.to_str().unwrap()]).0, 0);
    assert_eq!(vmlab(&["run", &other, "--json", b.to_str().unwrap()]).0, 0);
    let (code, text, err) = vmlab(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: the runs are of different scenarios"), "{err}");
    assert!(text.lines().next().unwrap_or_default().contains("vars.threads=2"), "{text}");
    let (code, _, err) = vmlab(&["compare", a.to_str().unwrap(), "--select", "profile=nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--select profile=nope"), "{err}");
}

#[test]
fn plot_writes_a_labelled_svg_a_deterministic_png_and_refuses_other_names() {
    // SMALL ends in 2.5 ms: sampled every millisecond, each run has a line to draw.
    let p = small("plot.toml", &format!("interval = \"1ms\"\nduration = \"1s\"\n{SMALL}"));
    let a = tmp("plot-a.json");
    let b = tmp("plot-b.json");
    assert_eq!(vmlab(&["run", &p, "--profile", "linux-2.6.26", "--json", a.to_str().unwrap()]).0, 0);
    assert_eq!(vmlab(&["run", &p, "--profile", "linux-6.8", "--json", b.to_str().unwrap()]).0, 0);
    let plot = |out: &Path| {
        vmlab(&[
            "plot",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--columns",
            "free_kb,kswapd_cpu_pct",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let out = tmp("plot.svg");
    let (code, _, err) = plot(&out);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&out).expect("svg written");
    assert!(svg.starts_with("<svg"), "{svg}");
    for want in ["simulated time (s)", ">MiB<", ">% of one CPU<", "linux-2.6.26: MemFree", "linux-6.8: kswapd"] {
        assert!(svg.contains(want), "missing {want}");
    }
    // PNG: the same chart rasterised at twice the SVG's 960 x 540; the same runs, the same bytes.
    let (one, two) = (tmp("plot-1.png"), tmp("plot-2.PNG"));
    for out in [&one, &two] {
        let (code, _, err) = plot(out);
        assert_eq!(code, 0, "{err}");
    }
    let png = std::fs::read(&one).expect("png written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes"));
    assert_eq!((dim(16), dim(20)), (1920, 1080));
    assert!(png.len() > 20_000, "text and lines drawn, not a blank page: {} bytes", png.len());
    assert!(png == std::fs::read(&two).expect("second png"), "same JSON, same PNG bytes");
    assert_eq!(svg.matches("<polyline").count(), 4, "{svg}");
    assert!(!svg.contains("points=\"\""), "every line has points: {svg}");
    for bad in ["plot.pdf", "plot"] {
        let (code, _, err) = vmlab(&["plot", a.to_str().unwrap(), "--out", tmp(bad).to_str().unwrap()]);
        assert_eq!(code, 2, "{bad}");
        assert!(err.contains("FILE.svg or FILE.png"), "{err}");
        assert!(!tmp(bad).exists(), "{bad}");
    }
}

/// The number before `×` that follows `after` in `text`.
fn times_after(text: &str, after: &str) -> String {
    let rest = &text[text.find(after).unwrap_or_else(|| panic!("README has no `{after}`")) + after.len()..];
    rest[..rest.find('×').unwrap_or_else(|| panic!("no × after `{after}`"))].to_string()
}

#[test]
fn readme_speedups_are_the_ones_reproduce_004_prints() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
        .expect("README.md")
        .replace('\n', " ");
    let (code, out, err) = vmlab(&["reproduce", "004"]);
    assert_eq!(code, 0, "{err}");
    // The table's 16-thread (read, mmap) speedups of a kernel: its row's last two cells.
    let speedups = &out[out.find("Speedups relative to nthreads=1").expect("the speedup table")..];
    let at16 = |kernel: &str| {
        let row = speedups.lines().find(|l| l.starts_with(&format!("{kernel}, "))).expect("speedup row");
        let cells: Vec<&str> = row.split(", ").collect();
        (cells[cells.len() - 2].to_string(), cells[cells.len() - 1].to_string())
    };
    let (read, mmap_2626) = at16("linux-2.6.26");
    let claims = [
        ("scales with threads (", &mmap_2626),
        ("while `read()` does (", &read),
        ("(`linux-2.6.38`, ", &at16("linux-2.6.38").1),
        ("(`linux-6.8`, ", &at16("linux-6.8").1),
        ("mmap nearly flat on 2.6.26 (", &mmap_2626),
        ("while read is ", &read),
        ("mmap scales on 2.6.38 (", &at16("linux-2.6.38").1),
        ("and 6.8 (", &at16("linux-6.8").1),
    ];
    for (after, printed) in claims {
        assert_eq!(&times_after(&readme, after), printed, "README's `{after}…×` against the printed table");
    }
}
