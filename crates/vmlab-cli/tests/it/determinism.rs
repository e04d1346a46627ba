//! Same scenario and seed ⇒ byte-identical output, across processes: two separate `vmlab run`s
//! of one scenario, started from different working directories and naming the file by a relative
//! and by an absolute path, print the same text and write the same JSON. Within one process a
//! hash map's order or an address could repeat by luck; across processes they do not.

use std::path::{Path, PathBuf};

use crate::common::{scratch_dir, vmlab_cmd};

/// No `name`: the report names the scenario after its file, which must not depend on how the
/// path was spelled. Two threads sharing an address space, random (zipf and uniform) accesses,
/// swap and a file read make the run depend on the PRNG, the scheduler and reclaim.
const SCENARIO: &str = r#"
seed = 11
interval = "500ms"

[machine]
memory = "96MiB"
cpus = 2

[[disk]]
name = "sda"

[swap]
size = "128MiB"

[[file]]
name = "f"
size = "64MiB"

[[process]]
name = "mixer"
program = '''
mmap heap anon 128MiB
touch heap write
threads 2 {
    touch heap write pattern=zipf count=20000
}
read f bs=128KiB
touch heap read pattern=uniform count=20000
'''
"#;

fn dir() -> PathBuf {
    let d = scratch_dir("vmlab-determinism");
    std::fs::create_dir_all(d.join("elsewhere")).expect("tmp dir");
    d
}

/// `vmlab ARGS` run in `cwd`; its standard output.
fn vmlab(cwd: &Path, args: &[&str]) -> Vec<u8> {
    let out = vmlab_cmd().args(args).current_dir(cwd).output().expect("vmlab runs");
    assert!(out.status.success(), "vmlab {args:?} in {}: {}", cwd.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn two_processes_in_different_directories_give_the_same_bytes() {
    let d = dir();
    std::fs::write(d.join("det.toml"), SCENARIO).expect("write scenario");
    let abs = d.join("det.toml").to_string_lossy().into_owned();
    let json_b = d.join("elsewhere/b.json").to_string_lossy().into_owned();

    let text_a = vmlab(&d, &["run", "det.toml", "--json", "a.json"]);
    let text_b = vmlab(&d.join("elsewhere"), &["run", &abs, "--json", &json_b]);
    let json_a = std::fs::read(d.join("a.json")).expect("a.json");
    let json_b = std::fs::read(&json_b).expect("b.json");

    // The run did something worth comparing.
    let v: serde_json::Value = serde_json::from_slice(&json_a).expect("JSON parses");
    assert_eq!(v["scenario"], "det.toml");
    assert!(v["vmstat"]["pswpout"].as_u64().unwrap_or(0) > 0, "no swap-out: {}", v["vmstat"]);
    assert!(v["timeline"].as_array().is_some_and(|t| t.len() > 1));

    assert!(json_a == json_b, "JSON differs between the two processes: {}", first_difference(&json_a, &json_b));
    assert!(text_a == text_b, "text differs between the two processes: {}", first_difference(&text_a, &text_b));

    // `--json -` prints the very document `--json FILE` writes.
    let json_c = vmlab(Path::new("/"), &["run", &abs, "--json", "-"]);
    assert!(json_a == json_c, "--json - differs from --json FILE: {}", first_difference(&json_a, &json_c));
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    match a.lines().zip(b.lines()).enumerate().find(|(_, (x, y))| x != y) {
        Some((i, (x, y))) => format!("line {}: `{x}` vs `{y}`", i + 1),
        None => format!("one is a prefix of the other ({} vs {} lines)", a.lines().count(), b.lines().count()),
    }
}
