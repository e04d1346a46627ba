//! `perform_write`: a buffered write's page beyond the read copy (`write_begin`, the copy into
//! a new page, `write_end`) is charged once per page written, and not at all at 0 (vmlab's own
//! table), so a calibration that fits it moves only the writes.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::stats::kfunc::KFunc;
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::workload::load_scenario_str;

const WRITER: &str = r#"name = "write-cost"
seed = 1
[machine]
memory = "256MiB"
cpus = 1
[[disk]]
name = "sda"
model = "ssd"
[[file]]
name = "out"
size = "0"
[[process]]
name = "writer"
program = '''
write out len=LEN bs=1MiB
'''
"#;

fn run(len: &str, sets: &[&str]) -> Sim {
    let text = WRITER.replace("LEN", len);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("write-cost.toml", &text, &sets).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    sim.run().expect("runs");
    sim
}

#[test]
fn perform_write_is_charged_once_per_page_written() {
    for mib in [4u64, 16] {
        let base = run(&format!("{mib}MiB"), &[]);
        let dear = run(&format!("{mib}MiB"), &["machine.cost.perform_write=2us"]);
        assert_eq!(base.k.cost.perform_write, 0, "vmlab's own table charges nothing extra");
        let each = dear.k.cost.perform_write;
        assert!(each > 0);
        let pages = mib * 256;
        assert_eq!(
            dear.k.prof.get(KFunc::GenericFileWrite) - base.k.prof.get(KFunc::GenericFileWrite),
            pages * each,
            "{mib} MiB: one charge per page written"
        );
    }
}

/// `write_new_folio`: paid once for each folio a write adds to the page cache (6.8's
/// `write_begin` creating it, `write_end` dirtying it the first time), and not again when the
/// same pages are written over while they are still cached and dirty; nothing at 0.
#[test]
fn write_new_folio_is_charged_per_folio_added_not_per_page_written() {
    let twice = |sets: &[&str]| {
        let text = WRITER
            .replace("write out len=LEN bs=1MiB", "write out len=8MiB bs=1MiB\nwrite out offset=0 len=8MiB bs=1MiB");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let sc = load_scenario_str("write-cost.toml", &text, &sets).expect("loads");
        let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
        sim.run().expect("runs");
        sim
    };
    let base = twice(&[]);
    let dear = twice(&["machine.cost.write_new_folio=2us"]);
    assert_eq!(base.k.cost.write_new_folio, 0, "vmlab's own table charges nothing extra");
    let each = dear.k.cost.write_new_folio;
    assert!(each > 0);
    let added = 8 * 256;
    let extra = dear.k.prof.get(KFunc::GenericFileWrite) - base.k.prof.get(KFunc::GenericFileWrite);
    assert_eq!(extra, added * each, "one charge per folio added, none for the second pass over them");
    // The same 8 MiB written once pays the same: the second pass adds nothing.
    let once = run("8MiB", &["machine.cost.write_new_folio=2us"]);
    let once_base = run("8MiB", &[]);
    assert_eq!(once.k.prof.get(KFunc::GenericFileWrite) - once_base.k.prof.get(KFunc::GenericFileWrite), extra);
}

/// `end_writeback`: each page whose write ends costs its completion's handler that much more
/// (6.8's `folio_end_writeback`, once per folio), on top of `irq_handler` once per request, and
/// nothing at 0 (vmlab's own table). The handler's row holds both.
#[test]
fn end_writeback_is_charged_per_page_in_the_write_completion() {
    let written = |s: &Sim| s.k.ev.get(vmlab_core::stats::vmstat::Vm::NrWritten);
    let handler = |s: &Sim| s.k.prof.irq.iter().map(|r| (r.ns, r.calls)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    // More than the background threshold of 256 MiB, so that the flusher writes during the run.
    let base = run("64MiB", &[]);
    let dear = run("64MiB", &["machine.cost.end_writeback=1us"]);
    assert_eq!(base.k.cost.end_writeback, 0);
    let each = dear.k.cost.end_writeback;
    assert!(each > 0);
    for (s, per_page) in [(&base, 0), (&dear, each)] {
        let (ns, calls) = handler(s);
        assert!(calls > 0 && written(s) > 0, "the writes completed");
        assert_eq!(ns, calls * s.k.cost.irq_handler + written(s) * per_page);
    }
}

/// `write()` calls smaller than a page (the seed 000 dd's `bs=64`): every call after the first
/// into a page looks it up again. On 2.4.9 that is the page's second use, and `check_used_once`
/// (2.4.9 `generic_file_write`, after each call's copy) activates it, so the written file starts
/// on the active list; with calls of a page or more each page is used once and stays
/// inactive. Each further call costs a system call; 6.8 marks nothing either way.
#[test]
fn calls_smaller_than_a_page_use_each_page_again() {
    let dd = |profile: &str, bs: &str| {
        let text = WRITER.replace("write out len=LEN bs=1MiB", &format!("write out len=4MiB bs={bs}"));
        let sc = load_scenario_str("write-cost.toml", &text, &[]).expect("loads");
        let mut sim = Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds");
        sim.run().expect("runs");
        sim
    };
    let pages = 4 * 256;
    let (small, big) = (dd("linux-2.4.9", "64"), dd("linux-2.4.9", "1MiB"));
    assert_eq!(small.k.ev.get(Vm::Pgactivate), pages, "the second call into each page activates it");
    assert_eq!(big.k.ev.get(Vm::Pgactivate), 0, "one call a page: used once, left inactive");
    let calls = |s: &Sim| s.k.prof.get(KFunc::Syscall) / s.k.cost.syscall;
    assert_eq!(calls(&small) - calls(&big), pages * 63, "63 further calls into each page");
    let (small, big) = (dd("linux-6.8", "64"), dd("linux-6.8", "1MiB"));
    assert_eq!(small.k.ev.get(Vm::Pgactivate), big.k.ev.get(Vm::Pgactivate), "6.8's write_begin marks nothing");
    assert_eq!(calls(&small) - calls(&big), pages * 63);
}
