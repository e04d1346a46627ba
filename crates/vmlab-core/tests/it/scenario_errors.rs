//! Bad scenarios must fail with a message that starts with the exact `file:line:col: ` of the
//! mistake (or names the `--set` that caused it), and must never panic.

use proptest::prelude::*;
use vmlab_core::workload::{load_scenario_str, parse_program, ScenarioError};

/// A valid scenario; each test breaks one line of it.
const GOOD: &str = r#"name = "demo"
seed = 1

[machine]
memory = "2GiB"
cpus = 2

[[disk]]
name = "sda"
bandwidth = "24MB/s"

[[file]]
name = "chunk{i}"
count = 20
size = 427683520

[[process]]
name = "loader"
program = '''
let slots = 0
for s in 0..6 {
    mmap slot{s} anon 427683520 prot=read
    mlock slot{s}
    if errno != 0 {
        munmap slot{s}
        break
    }
    slots += 1
}
for j in 0..20 {
    let i = j % slots
    munlock slot{i}
    munmap slot{i}
    mmap slot{i} file=chunk{j} 427683520 fixed prot=read
    mlock slot{i} chunk=1MiB
}
mark loaded
sleep forever
'''
"#;

fn load(text: &str, sets: &[&str]) -> Result<(), ScenarioError> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load_scenario_str("bad.toml", text, &sets).map(|_| ())
}

/// Replace `from` (which must occur exactly once) and return the error message.
fn error_after(from: &str, to: &str) -> String {
    assert_eq!(GOOD.matches(from).count(), 1, "`{from}` must occur once");
    match load(&GOOD.replace(from, to), &[]) {
        Ok(()) => panic!("replacing `{from}` by `{to}` still loads"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_scenario_loads() {
    load(GOOD, &[]).unwrap();
}

#[test]
fn unknown_key_suggests_the_nearest() {
    assert_eq!(
        error_after("memory = ", "memroy = "),
        "bad.toml:5:1: unknown key `memroy` in [machine]; did you mean `memory`?"
    );
    assert_eq!(
        error_after("seed = 1", "sed = 1"),
        "bad.toml:2:1: unknown key `sed` at the top level; did you mean `seed`?"
    );
    assert_eq!(
        error_after("bandwidth = ", "bandwith = "),
        "bad.toml:10:1: unknown key `bandwith` in [[disk]]; did you mean `bandwidth`?"
    );
}

#[test]
fn bad_size_unit_points_at_the_value() {
    assert_eq!(
        error_after("\"2GiB\"", "\"2GB2\""),
        "bad.toml:5:10: unknown size unit `GB2` in `2GB2`: expected one of B K KiB M MiB G GiB T TiB KB MB GB TB"
    );
    assert_eq!(
        error_after("\"24MB/s\"", "\"24Mb/s\""),
        "bad.toml:10:13: bad bandwidth `24Mb/s`: unknown size unit `Mb` in `24Mb`: expected one of B K KiB M MiB G GiB T TiB KB MB GB TB"
    );
}

#[test]
fn unterminated_block_points_at_the_brace() {
    // Drop the `}` closing `if errno != 0 {`: every later `}` then closes the block one level
    // further out, and the one left open at the end is the first `for`'s (line 21).
    let e = error_after("        break\n    }\n", "        break\n");
    assert_eq!(e, "bad.toml:21:15: unterminated block: expected `}` to close this `{`, found end of program");
}

#[test]
fn unknown_operation_suggests() {
    assert_eq!(
        error_after("    mlock slot{s}\n", "    mlokc slot{s}\n"),
        "bad.toml:23:5: unknown operation `mlokc`; did you mean `mlock`?"
    );
    assert_eq!(
        error_after("mark loaded", "mrak loaded"),
        "bad.toml:37:1: unknown operation `mrak`; did you mean `mark`?"
    );
}

#[test]
fn unknown_op_key_and_missing_argument() {
    assert_eq!(
        error_after("chunk=1MiB", "chunck=1MiB"),
        "bad.toml:35:19: unknown key `chunck` for `mlock`; did you mean `chunk`?"
    );
    assert_eq!(error_after("anon 427683520 prot=read", "anon prot=read"), "bad.toml:22:5: mmap needs a length");
}

#[test]
fn wrong_argument_type() {
    // A word where a number is expected, and a number where a word is expected.
    assert_eq!(error_after("anon 427683520", "anon fast"), "bad.toml:22:23: unknown variable `fast`");
    assert_eq!(
        error_after("fixed prot=read", "fixed prot=4"),
        "bad.toml:34:53: expected prot: one of `read`, `write`, `rw`, found `4`"
    );
    assert_eq!(error_after("cpus = 2", "cpus = \"two\""), "bad.toml:6:8: expected u32, found string \"two\"");
    assert_eq!(error_after("let slots = 0", "let slots = ="), "bad.toml:20:13: expected an expression, found `=`");
}

#[test]
fn bad_set_names_the_set() {
    let err = |sets: &[&str]| load(GOOD, sets).unwrap_err().to_string();
    assert_eq!(err(&["machine.memory"]), "--set machine.memory: malformed --set: expected KEY=VALUE, found no `=`");
    assert_eq!(
        err(&["process.3.count=2"]),
        "--set process.3.count=2: there is no `process` number 3: the scenario has 1 (counting from 0)"
    );
    assert_eq!(
        err(&["machine.memory=2Gx"]),
        "--set machine.memory=2Gx: unknown size unit `Gx` in `2Gx`: expected one of B K KiB M MiB G GiB T TiB KB MB GB TB"
    );
    assert_eq!(err(&["machine.cpu=4"]), "--set machine.cpu=4: unknown key `cpu` in [machine]; did you mean `cpus`?");
    // The file is fine; the set is blamed even though it changes a file value.
    assert_eq!(err(&["seed=-1"]), "--set seed=-1: invalid value: integer `-1`, expected u64");
    assert!(load(GOOD, &["machine.memory=4GiB", "vm.swappiness=60", "process.loader.count=2"]).is_ok());
    // The other writers' dirty pages are the machine's own page cache, on one of its disks.
    assert_eq!(
        err(&["machine.foreign_dirty=3GiB"]),
        "--set machine.foreign_dirty=3GiB: 3221225472 bytes of dirty page cache do not fit in the machine's 2147483648"
    );
    assert_eq!(
        err(&["machine.foreign_disk=sdb"]),
        "--set machine.foreign_disk=sdb: no disk named `sdb`; did you mean `sda`?"
    );
    assert!(load(GOOD, &["machine.foreign_dirty=30MB", "machine.foreign_disk=sda"]).is_ok());
    // Free page reporting walks the buddy lists up to order 10.
    assert_eq!(
        err(&["machine.page_reporting_order=11"]),
        "--set machine.page_reporting_order=11: page_reporting_order 11 is above the buddy allocator's largest order, 10"
    );
    assert!(load(GOOD, &["machine.page_reporting_order=9"]).is_ok());
}

#[test]
fn basic_string_programs_are_located_approximately() {
    let text =
        GOOD.replace("'''\nlet slots", "\"\"\"\nlet slots").replace("sleep forever\n'''", "sleep forevr\n\"\"\"");
    let e = load(&text, &[]).unwrap_err().to_string();
    assert!(e.starts_with("bad.toml:38:"), "{e}");
}

#[test]
fn crlf_files_keep_exact_columns() {
    let text = GOOD.replace('\n', "\r\n").replace("mark loaded", "mark loaded extra");
    let e = load(&text, &[]).unwrap_err().to_string();
    assert_eq!(e, "bad.toml:37:13: unknown argument `extra` for `mark`");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parse_program_never_panics(s in "\\PC*") {
        let _ = parse_program(&s, 0, &s);
    }

    #[test]
    fn parse_program_never_panics_on_token_soup(
        toks in prop::collection::vec(
            prop::sample::select(vec![
                "mmap", "x", "anon", "file=", "{", "}", "(", ")", "1", "4K", "1.5s", "let", "=", "+=",
                "for", "in", "..", "if", "else", "loop", "break", "\n", ";", " ", "#c", "-", "!", "==",
                "min(", ",", "slot{i}", "foreach", "queue", "count=", "sleep", "forever", "touch",
                "pattern=zipf", "theta=", "é", "\"", "'", "\r",
            ]),
            0..60,
        ),
        base in 0usize..200,
    ) {
        let s: String = toks.concat();
        // A base offset past the end of the "file" must be clamped, not panic.
        let _ = parse_program(&s, base, &s);
    }

    #[test]
    fn load_never_panics(s in "\\PC*", set in "\\PC*") {
        let _ = load_scenario_str("p.toml", &s, std::slice::from_ref(&set));
        let text = format!("{GOOD}\n{s}");
        let _ = load_scenario_str("p.toml", &text, &[set]);
    }
}

#[test]
fn miette_renders_snippet_label_and_help() {
    let e = load_scenario_str("bad.toml", &GOOD.replace("memory = ", "memroy = "), &[]).unwrap_err();
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, &e)
        .unwrap();
    assert!(out.contains("bad.toml:5:1: unknown key `memroy` in [machine]; did you mean `memory`?"), "{out}");
    assert!(out.contains("memroy = \"2GiB\""), "{out}");
    assert!(out.contains("unknown key"), "{out}");
    assert!(out.contains("help: expected one of `memory`"), "{out}");
}

/// The example in the newcomer's guide must stay valid.
#[test]
fn docs_example_loads() {
    let doc = include_str!("../../../../docs/SCENARIOS.md");
    let start = doc.find("```toml\n").expect("docs have a toml example") + "```toml\n".len();
    let len = doc[start..].find("```").expect("example is closed");
    let s = load_scenario_str("demo.toml", &doc[start..start + len], &[]).unwrap();
    assert_eq!(s.processes.len(), 1);
}

#[test]
fn missing_required_key() {
    let e = load(&GOOD.replace("memory = \"2GiB\"\n", ""), &[]).unwrap_err().to_string();
    assert_eq!(e, "bad.toml:4:1: missing required key `memory`");
}

/// A packet rate no NIC has is refused where it is written (the fuzzer's hang: 10^12 packets a
/// second, each an allocation attempt, took half a minute per simulated second).
#[test]
fn netrx_rates_beyond_any_nic_are_refused() {
    let e =
        load(&format!("{GOOD}\n[[netrx]]\nrate = 1000000000000\nlifetime = \"5ms\"\n"), &[]).unwrap_err().to_string();
    assert!(e.starts_with("bad.toml:42:8: 1000000000000 packets a second is beyond any NIC"), "{e}");
    load(&format!("{GOOD}\n[[netrx]]\nrate = \"148809524/s\"\nlifetime = \"5ms\"\n"), &[])
        .expect("100 GbE's line rate loads");
}

#[test]
fn machine_cost_errors_point_at_the_entry() {
    let e = error_after("cpus = 2", "cpus = 2\ncost = { lru_scan = \"240ns\", spinn = \"1us\" }");
    assert_eq!(e, "bad.toml:7:38: unknown cost entry `spinn`; did you mean `spin`?");
    let e = error_after("cpus = 2", "cpus = 2\ncost = { lru_scan = 240 }");
    assert!(e.starts_with("bad.toml:7:21: expected a duration such as \"240ns\""), "{e}");
}

#[test]
fn machine_cost_reaches_the_kernel() {
    use vmlab_core::sim::{resolve_profile, Sim};
    let sets = vec!["machine.cost.lru_scan=240ns".to_string()];
    let sc = load_scenario_str("good.toml", GOOD, &sets).expect("loads");
    let sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-2.4.9")).expect("profile")).expect("builds");
    assert_eq!(sim.k.cost.lru_scan, 240);
    // Entries not given keep the table scaled from 3 GHz (here the default clock).
    let plain = load_scenario_str("good.toml", GOOD, &[]).expect("loads");
    let sim2 = Sim::new(&plain, resolve_profile(&plain, Some("linux-2.4.9")).expect("profile")).expect("builds");
    assert_eq!(sim2.k.cost.spin, sim.k.cost.spin);
    assert_ne!(sim2.k.cost.lru_scan, 240);
}

#[test]
fn page_reporting_needs_a_kernel_that_has_it() {
    use vmlab_core::sim::{resolve_profile, Sim};
    let sets = vec!["machine.page_reporting_order=9".to_string()];
    let sc = load_scenario_str("good.toml", GOOD, &sets).expect("loads");
    let e = Sim::new(&sc, resolve_profile(&sc, Some("linux-2.4.9")).expect("profile")).err().expect("refused");
    assert!(e.message.contains("free page reporting came with 5.7; profile `linux-2.4.9`"), "{}", e.message);
    let sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    assert_eq!(sim.k.page_reporting.order, 9);
}
