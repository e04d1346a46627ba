//! `swapoff` as a program step (`crate::swapfile`: 2.6.3x `sys_swapoff` / `try_to_unuse`): every
//! slot in use is read back through the allocator, one page at a time, its PTEs point at the
//! page, and the area is gone — no swap-outs after it, no major faults on the pages it brought
//! back, SwapTotal 0.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::report::RunReport;

/// 256 MiB, 512 MiB of swap: `a` (160 MiB) is written, then `b` (160 MiB) pushes part of it
/// to swap and is unmapped; `swapoff` follows (`SWAPOFF` in the program), then `a` is read
/// whole, and the process stays (so its mm can be looked at).
fn run(profile: &str, swapoff: &str) -> (RunReport, vmlab_core::sim::Sim) {
    let sc = format!(
        r#"
profile = "{profile}"

[machine]
memory = "256MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "512MiB"
disk = "sda"

[[process]]
name = "p"
program = '''
mmap a anon 160MiB
touch a write
mmap b anon 160MiB
touch b write
munmap b
mark swapped
{swapoff}
if errno != 0 {{
    mark failed
}}
mark off
touch a read
mark done
sleep forever
'''
"#
    );
    let sc = vmlab_core::workload::load_scenario_str("swapoff.toml", &sc, &[]).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    assert!(r.metrics.get("done").is_some(), "the program finishes");
    sim.k.check_frames().expect("frames consistent");
    sim.k.check_rmap().expect("rmap consistent");
    (r, sim)
}

const A_PAGES: u64 = 160 * 256;

#[test]
fn swapoff_reads_every_swapped_page_back_and_leaves_no_swap() {
    for profile in ["linux-2.6.36", "linux-6.8"] {
        let (base, _) = run(profile, "");
        let (r, sim) = run(profile, "swapoff");
        let (out, pin, maj) = (r.counter("pswpout"), r.counter("pswpin"), r.counter("pgmajfault"));
        let (bout, bpin, bmaj) = (base.counter("pswpout"), base.counter("pswpin"), base.counter("pgmajfault"));
        eprintln!("{profile}: swapoff pswpout {out} pswpin {pin} pgmajfault {maj}; without: {bout} {bpin} {bmaj}");
        assert!(r.metrics.get("failed").is_none(), "{profile}: swapoff succeeded");
        assert!(sim.k.swap.is_none(), "{profile}: no swap area afterwards");
        assert_eq!(vmlab_core::swap_state::si_swapinfo(&sim.k), (0, 0), "{profile}: SwapTotal 0");
        assert!(bmaj > 1_000, "{profile}: without swapoff, reading `a` faults pages back ({bmaj})");
        // Everything swapped out before the swapoff came back through it; the read of `a` after
        // it found every page present (the faults left are the first pass's, before any swap).
        assert!(out > 1_000, "{profile}: part of `a` and `b` went to swap ({out})");
        assert!(pin > 0 && pin <= out, "{profile}: swapoff read {pin} of {out} swapped pages");
        assert!(maj < bmaj / 10, "{profile}: the read of `a` after swapoff faulted {maj} times (without: {bmaj})");
        let rss = sim.k.mms.iter().flatten().map(|m| m.rss_anon).max().unwrap_or(0);
        assert!(rss >= A_PAGES, "{profile}: all of `a` is mapped at the end ({rss} of {A_PAGES})");
    }
}

#[test]
fn swapoff_without_a_swap_area_sets_einval() {
    let sc = r#"
profile = "linux-2.6.36"

[machine]
memory = "64MiB"

[[process]]
name = "p"
program = '''
swapoff
if errno == 22 {
    mark einval
}
'''
"#;
    let sc = vmlab_core::workload::load_scenario_str("noswap.toml", sc, &[]).expect("loads");
    let (r, _) = api::run(&sc, RunOpts::default()).expect("runs");
    assert!(r.metrics.get("einval").is_some(), "swapoff with no swap area: EINVAL");
}

#[test]
fn swapoff_with_an_argument_is_an_error_at_its_position() {
    let sc = "profile = \"linux-2.6.36\"\n[machine]\nmemory = \"64MiB\"\n[[process]]\nname = \"p\"\nprogram = '''\nswapoff 3\n'''\n";
    let Err(e) = vmlab_core::workload::load_scenario_str("bad.toml", sc, &[]) else { panic!("refused") };
    let msg = format!("{e:?}");
    assert!(msg.contains("swapoff"), "the error names the op: {msg}");
}
