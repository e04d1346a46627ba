//! `--trace`: every line parses with the regexes of the kernel's own consumer,
//! `Documentation/trace/postprocess/trace-vmscan-postprocess.pl` (its 2.6.36/37 defaults, and
//! the 6.x ones), or, for events that script does not read, a regex made from the release's
//! TP_printk; and the events add up to the run's counters.

use regex_lite::Regex;
use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::ftrace::{FtraceWriter, TraceFormat};
use vmlab_core::stats::report::RunReport;

// The pause between the sweep and the read lets kswapd balance, nap HZ/10 unwoken and sleep, so
// the trace holds a `mm_vmscan_kswapd_sleep` and the read's `mm_vmscan_kswapd_wake`. Without it
// a 6.8 kswapd sleeps only where a reclaimer dumped the whole inactive list on the disk and the
// hog then waited on those writes; 6.8's wbt meters swap writes (`swap_state::wbt_wait_swap`),
// the hog's allocations go on, and every nap is cut short (wbt26, history/era-6.8-blk.md).
const RECLAIM: &str = r#"
[machine]
memory = "128MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "512MiB"
disk = "sda"

[[file]]
name = "data"
size = "96MiB"
disk = "sda"

[[process]]
name = "hog"
program = '''
mmap heap anon 160MiB
touch heap write
sleep 300ms
read data
touch heap write
'''
"#;

/// A writer past the background threshold, then fsync: the flusher writes some of the file,
/// fsync the rest.
const WRITER: &str = r#"
[machine]
memory = "256MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[[disk]]
name = "sdb"
model = "ssd"

[[file]]
name = "out"
size = "64MiB"
disk = "sdb"

[[process]]
name = "writer"
program = '''
write out
fsync out
mark written
'''
"#;

fn traced(profile: &str, events: &[String]) -> (RunReport, String) {
    traced_text(profile, RECLAIM, events)
}

fn traced_text(profile: &str, scenario: &str, events: &[String]) -> (RunReport, String) {
    let sc = vmlab_core::workload::load_scenario_str("reclaim.toml", scenario, &[]).expect("loads");
    let fmt = vmlab_core::sim::resolve_profile(&sc, Some(profile)).unwrap().tracepoints.expect("has tracepoints");
    let buf = crate::common::TraceBuf::default();
    let w = FtraceWriter::new(Box::new(buf.clone()), fmt, events).expect("writer");
    let (r, _) = api::run(&sc, RunOpts { profile: Some(profile), tracers: vec![Box::new(w)], ..Default::default() })
        .expect("runs");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (r, text)
}

/// (event, details regex) as the release's consumers read them.
fn regexes(fmt: TraceFormat) -> Vec<(&'static str, &'static str)> {
    let kmem26 = [
        ("mm_page_alloc", r"page=([0-9a-f]*) pfn=([0-9]*) order=([0-9]*) migratetype=([0-9]*) gfp_flags=([A-Z_|]*)"),
        ("mm_page_free_direct", r"page=([0-9a-f]*) pfn=([0-9]*) order=([0-9]*)"),
    ];
    match fmt {
        TraceFormat::Linux2636 | TraceFormat::Linux2638 => {
            // trace-vmscan-postprocess.pl as merged for 2.6.36 (Mel Gorman, 2010) and, for
            // shrink_inactive, as 2.6.37 changed it ("tracing, vmscan: Add trace events for LRU
            // list shrinking", linux-mm, 6 Sep 2010).
            let mut v = vec![
                ("mm_vmscan_direct_reclaim_begin", r"order=([0-9]*) may_writepage=([0-9]*) gfp_flags=([A-Z_|]*)"),
                ("mm_vmscan_direct_reclaim_end", r"nr_reclaimed=([0-9]*)"),
                ("mm_vmscan_kswapd_wake", r"nid=([0-9]*) order=([0-9]*)"),
                ("mm_vmscan_kswapd_sleep", r"nid=([0-9]*)"),
                ("mm_vmscan_wakeup_kswapd", r"nid=([0-9]*) zid=([0-9]*) order=([0-9]*)"),
                (
                    "mm_vmscan_lru_isolate",
                    r"isolate_mode=([0-9]*) order=([0-9]*) nr_requested=([0-9]*) nr_scanned=([0-9]*) nr_taken=([0-9]*) contig_taken=([0-9]*) contig_dirty=([0-9]*) contig_failed=([0-9]*)",
                ),
                ("mm_vmscan_writepage", r"page=([0-9a-f]*) pfn=([0-9]*) flags=([A-Z_|]*)"),
                (
                    "mm_vmscan_lru_shrink_inactive",
                    r"nid=([0-9]*) zid=([0-9]*) nr_scanned=([0-9]*) nr_reclaimed=([0-9]*) priority=([0-9]*) flags=([A-Z_|]*)",
                ),
            ];
            v.extend(kmem26);
            // include/trace/events/writeback.h's wbc_class as 2.6.36 had it (more_io and
            // older_than_this printed until 3.1).
            v.push((
                "wbc_writepage",
                r"bdi ([0-9]*):([0-9]*): towrt=(-?[0-9]*) skip=([0-9]*) mode=([0-9]*) kupd=([0-9]*) bgrd=([0-9]*) reclm=([0-9]*) cyclic=([0-9]*) more=([0-9]*) older=0x([0-9a-f]*) start=0x([0-9a-f]*) end=0x([0-9a-f]*)",
            ));
            v
        }
        TraceFormat::Linux68 => vec![
            // The script's 6.x defaults (Vlastimil Babka's update to the 5.x/6.x TP_printks) ...
            ("mm_vmscan_direct_reclaim_begin", r"order=([0-9]*) gfp_flags=([A-Z_|]*)"),
            ("mm_vmscan_direct_reclaim_end", r"nr_reclaimed=([0-9]*)"),
            ("mm_vmscan_kswapd_wake", r"nid=([0-9]*) order=([0-9]*)"),
            ("mm_vmscan_kswapd_sleep", r"nid=([0-9]*)"),
            ("mm_vmscan_wakeup_kswapd", r"nid=([0-9]*) order=([0-9]*) gfp_flags=([A-Z_|]*)"),
            ("mm_vmscan_memcg_reclaim_begin", r"order=([0-9]*) gfp_flags=([A-Z_|]*)"),
            ("mm_vmscan_memcg_reclaim_end", r"nr_reclaimed=([0-9]*)"),
            (
                "mm_vmscan_lru_isolate",
                r"isolate_mode=([0-9]*) classzone=([0-9]*) order=([0-9]*) nr_requested=([0-9]*) nr_scanned=([0-9]*) nr_skipped=([0-9]*) nr_taken=([0-9]*) lru=([a-z_]*)",
            ),
            (
                "mm_vmscan_lru_shrink_inactive",
                r"nid=([0-9]*) nr_scanned=([0-9]*) nr_reclaimed=([0-9]*) nr_dirty=([0-9]*) nr_writeback=([0-9]*) nr_congested=([0-9]*) nr_immediate=([0-9]*) nr_activate_anon=([0-9]*) nr_activate_file=([0-9]*) nr_ref_keep=([0-9]*) nr_unmap_fail=([0-9]*) priority=([0-9]*) flags=([A-Z_|]*)",
            ),
            // ... and, for the events it does not read, 6.8's TP_printk.
            (
                "mm_vmscan_lru_shrink_active",
                r"nid=([0-9]*) nr_taken=([0-9]*) nr_active=([0-9]*) nr_deactivated=([0-9]*) nr_referenced=([0-9]*) priority=([0-9]*) flags=([A-Z_|]*)",
            ),
            (
                "mm_vmscan_throttled",
                r"nid=([0-9]*) usec_timeout=([0-9]*) usect_delayed=([0-9]*) reason=(VMSCAN_THROTTLE_[A-Z]*)",
            ),
            ("mm_vmscan_write_folio", r"page=([0-9a-f]*) pfn=0x([0-9a-f]*) flags=([A-Z_|]*)"),
            // memcg.h (6.1x, the host's; vmlab does not count pending updates).
            ("memcg_flush_stats", r"memcg_id=([0-9]*) force=([01]) needs_flush=1"),
            (
                "mm_page_alloc",
                r"page=([0-9a-f]*) pfn=0x([0-9a-f]*) order=([0-9]*) migratetype=([0-9]*) gfp_flags=([A-Z_|]*)",
            ),
            ("mm_page_free", r"page=([0-9a-f]*) pfn=0x([0-9a-f]*) order=([0-9]*)"),
            (
                "mm_filemap_add_to_page_cache",
                r"dev ([0-9]*):([0-9]*) ino ([0-9a-f]*) pfn=0x([0-9a-f]*) ofs=([0-9]*) order=([0-9]*)",
            ),
            (
                "mm_filemap_delete_from_page_cache",
                r"dev ([0-9]*):([0-9]*) ino ([0-9a-f]*) pfn=0x([0-9a-f]*) ofs=([0-9]*) order=([0-9]*)",
            ),
            // writeback.h: writeback_folio_template and 6.8's wbc_class.
            ("writeback_dirty_folio", r"bdi ([0-9]*):([0-9]*): ino=([0-9]*) index=([0-9]*)"),
            (
                "wbc_writepage",
                r"bdi ([0-9]*):([0-9]*): towrt=(-?[0-9]*) skip=([0-9]*) mode=([0-9]*) kupd=([0-9]*) bgrd=([0-9]*) reclm=([0-9]*) cyclic=([0-9]*) start=0x([0-9a-f]*) end=0x([0-9a-f]*) cgroup_ino=([0-9]*)",
            ),
        ],
    }
}

/// The script's line regex: 2.6.36's (no flags column) or 6.x's (optional irq-info flags).
fn line_regex(fmt: TraceFormat) -> Regex {
    Regex::new(match fmt {
        TraceFormat::Linux68 => {
            r"^\s*([a-zA-Z0-9-]*)\s*(\[[0-9]*\])(\s*[dX.][Nnp.][Hhs.][0-9a-fA-F.]*|)\s*([0-9.]*):\s*([a-zA-Z_]*):\s*(.*)$"
        }
        _ => r"^\s*([a-zA-Z0-9-]*)\s*(\[[0-9]*\])\s*([0-9.]*):\s*([a-zA-Z_]*):\s*(.*)$",
    })
    .unwrap()
}

/// Every line parsed: (event, captures of its details as numbers where numeric, text else).
fn parse(fmt: TraceFormat, text: &str) -> Vec<(String, Vec<String>)> {
    let line = line_regex(fmt);
    let details: Vec<(&str, Regex)> =
        regexes(fmt).into_iter().map(|(e, r)| (e, Regex::new(&format!("^{r}$")).unwrap())).collect();
    let mut out = Vec::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let c = line.captures(l).unwrap_or_else(|| panic!("line does not parse: {l}"));
        let n = c.len();
        let (event, rest) = (c[n - 2].to_string(), c[n - 1].to_string());
        assert!(c[1].contains('-'), "no task-pid in {l}");
        let (_, re) = details.iter().find(|(e, _)| *e == event).unwrap_or_else(|| panic!("unexpected event {event}"));
        let d = re.captures(&rest).unwrap_or_else(|| panic!("{event} details do not parse: {rest}"));
        out.push((event, d.iter().skip(1).map(|m| m.unwrap().as_str().to_string()).collect()));
    }
    out
}

fn sum(ev: &[(String, Vec<String>)], name: &str, field: usize, keep: impl Fn(&[String]) -> bool) -> u64 {
    ev.iter().filter(|(e, f)| e == name && keep(f)).map(|(_, f)| f[field].parse::<u64>().unwrap()).sum()
}

#[test]
fn linux_6_8_trace_parses_and_adds_up() {
    let (r, text) = traced("linux-6.8", &[]);
    let ev = parse(TraceFormat::Linux68, &text);
    let scanned = r.counter("pgscan_kswapd") + r.counter("pgscan_direct");
    let stolen = r.counter("pgsteal_kswapd") + r.counter("pgsteal_direct");
    assert!(scanned > 0 && stolen > 0);
    // lru_isolate: field 4 nr_scanned, 7 lru.
    assert_eq!(sum(&ev, "mm_vmscan_lru_isolate", 4, |f| f[7].starts_with("inactive")), scanned);
    assert_eq!(sum(&ev, "mm_vmscan_lru_isolate", 4, |f| f[7].starts_with("active")), r.counter("pgrefill"));
    assert_eq!(sum(&ev, "mm_vmscan_lru_shrink_inactive", 1, |_| true), scanned);
    assert_eq!(sum(&ev, "mm_vmscan_lru_shrink_inactive", 2, |_| true), stolen);
    assert_eq!(sum(&ev, "mm_vmscan_lru_shrink_active", 1, |_| true), r.counter("pgrefill"));
    let count = |n: &str| ev.iter().filter(|(e, _)| e == n).count() as u64;
    assert_eq!(count("mm_vmscan_direct_reclaim_begin"), count("mm_vmscan_direct_reclaim_end"));
    assert!(count("mm_vmscan_kswapd_wake") > 0 && count("mm_vmscan_wakeup_kswapd") > 0);
    assert!(count("mm_vmscan_write_folio") > 0, "reclaim wrote pages to swap");
    assert!(count("mm_page_alloc") > 0 && count("mm_filemap_add_to_page_cache") > 0);
    assert!(text.lines().any(|l| l.trim_start().starts_with("kswapd0-")), "kswapd's lines name it");
}

#[test]
fn linux_2_6_36_trace_parses_with_its_script_and_adds_up() {
    let (r, text) = traced("linux-2.6.36", &[]);
    let ev = parse(TraceFormat::Linux2636, &text);
    let scanned = r.counter("pgscan_kswapd") + r.counter("pgscan_direct");
    assert!(scanned > 0);
    // isolate_mode 1 is ISOLATE_ACTIVE (shrink_active_list: pgrefill); 0 and 2 are the
    // inactive list (2: lumpy, both).
    assert_eq!(sum(&ev, "mm_vmscan_lru_isolate", 3, |f| f[0] != "1"), scanned);
    assert_eq!(sum(&ev, "mm_vmscan_lru_isolate", 3, |f| f[0] == "1"), r.counter("pgrefill"));
    assert!(!ev.iter().any(|(e, _)| e == "mm_vmscan_lru_shrink_inactive"), "2.6.36 had no such event");
    assert!(!text.contains("mm_filemap_"), "nor filemap events");
    // What direct reclaim returns includes the lists' pgsteal_direct (and pages it freed by
    // other means), as the kernel's nr_reclaimed includes slab pages.
    assert!(sum(&ev, "mm_vmscan_direct_reclaim_end", 0, |_| true) >= r.counter("pgsteal_direct"));
    assert!(r.counter("pgsteal_direct") > 0);
}

#[test]
fn linux_2_6_38_adds_shrink_inactive() {
    let (r, text) = traced("linux-2.6.38", &[]);
    let ev = parse(TraceFormat::Linux2638, &text);
    let stolen = r.counter("pgsteal_kswapd") + r.counter("pgsteal_direct");
    assert!(stolen > 0);
    assert_eq!(sum(&ev, "mm_vmscan_lru_shrink_inactive", 3, |_| true), stolen);
    assert_eq!(
        sum(&ev, "mm_vmscan_lru_shrink_inactive", 2, |_| true),
        r.counter("pgscan_kswapd") + r.counter("pgscan_direct")
    );
}

/// The writeback events: one `writeback_dirty_folio` per page that became dirty (6.8 only),
/// one `wbc_writepage` per page the flusher or fsync wrote (every page of the file: nothing
/// else writes here), with the flusher's and fsync's `writeback_control` told apart.
#[test]
fn writeback_events_count_the_pages_dirtied_and_written() {
    let pages = 64 * 256;
    for (profile, fmt) in [
        ("linux-6.8", TraceFormat::Linux68),
        ("linux-2.6.36", TraceFormat::Linux2636),
        ("linux-2.6.38", TraceFormat::Linux2638),
    ] {
        let (r, text) = traced_text(profile, WRITER, &[]);
        assert!(r.metrics.get("written").is_some(), "{profile}: the writer finished");
        let ev = parse(fmt, &text);
        let wbc: Vec<&Vec<String>> = ev.iter().filter(|(e, _)| e == "wbc_writepage").map(|(_, f)| f).collect();
        assert_eq!(r.counter("nr_vmscan_write"), 0, "{profile}: reclaim wrote nothing");
        assert_eq!(wbc.len() as u64, r.counter("pgpgout") / 4, "{profile}: a wbc_writepage per page written");
        assert_eq!(wbc.len() as u64, pages, "{profile}");
        // The file is on the second disk (sdb, 8:16); fields 4..9: mode kupd bgrd reclm cyclic.
        assert!(wbc.iter().all(|f| f[0] == "8" && f[1] == "16" && f[7] == "0"), "{profile}");
        let flusher: Vec<_> = wbc.iter().filter(|f| f[4] == "0").collect();
        let fsync: Vec<_> = wbc.iter().filter(|f| f[4] == "1").collect();
        assert!(
            !flusher.is_empty() && !fsync.is_empty(),
            "{profile}: both wrote ({} / {})",
            flusher.len(),
            fsync.len()
        );
        assert!(
            flusher.iter().all(|f| f[8] == "1" && (f[5] == "1") != (f[6] == "1")),
            "{profile}: kupdate or background"
        );
        assert!(flusher.iter().any(|f| f[6] == "1"), "{profile}: past the background threshold");
        assert!(fsync.iter().all(|f| f[8] == "0" && f[5] == "0" && f[6] == "0"), "{profile}");
        // fsync's nr_to_write counts down from LONG_MAX, one page at a time.
        let towrt: Vec<i64> = fsync.iter().map(|f| f[2].parse().unwrap()).collect();
        assert_eq!(towrt[0], i64::MAX, "{profile}");
        assert!(towrt.windows(2).all(|w| w[1] == w[0] - 1), "{profile}");
        let dirtied: Vec<u64> =
            ev.iter().filter(|(e, _)| e == "writeback_dirty_folio").map(|(_, f)| f[3].parse().unwrap()).collect();
        if fmt == TraceFormat::Linux68 {
            let distinct: std::collections::BTreeSet<u64> = dirtied.iter().copied().collect();
            assert_eq!(
                (dirtied.len() as u64, distinct.len() as u64),
                (pages, pages),
                "{profile}: each page dirtied once"
            );
        } else {
            assert!(dirtied.is_empty(), "{profile}: no writeback_dirty_page in this release");
        }
    }
}

#[test]
fn events_filter_and_tracing_changes_nothing() {
    let want = vec!["mm_vmscan_kswapd_wake".to_string(), "mm_vmscan_kswapd_sleep".to_string()];
    let (r, text) = traced("linux-6.8", &want);
    let ev = parse(TraceFormat::Linux68, &text);
    assert!(!ev.is_empty() && ev.iter().all(|(e, _)| want.contains(e)));
    let sc = vmlab_core::workload::load_scenario_str("reclaim.toml", RECLAIM, &[]).unwrap();
    let (plain, _) = api::run(&sc, RunOpts { profile: Some("linux-6.8"), ..Default::default() }).unwrap();
    assert_eq!(plain.with_wall_s_zeroed().to_json_string(), r.with_wall_s_zeroed().to_json_string());
    let (r, _) = traced_text("linux-6.8", WRITER, &[]);
    let sc = vmlab_core::workload::load_scenario_str("reclaim.toml", WRITER, &[]).unwrap();
    let (plain, _) = api::run(&sc, RunOpts { profile: Some("linux-6.8"), ..Default::default() }).unwrap();
    assert_eq!(plain.with_wall_s_zeroed().to_json_string(), r.with_wall_s_zeroed().to_json_string());
    assert!(FtraceWriter::new(
        Box::new(std::io::sink()),
        TraceFormat::Linux2636,
        &["mm_filemap_add_to_page_cache".into()]
    )
    .is_err());
}

// A file read twice through a 48 MiB group on a machine with room to spare: every reclaim is
// the group's limit reclaim, none global.
const LIMITED: &str = r#"
[machine]
memory = "512MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[[file]]
name = "data"
size = "96MiB"
disk = "sda"

[[cgroup]]
name = "job"
limit_in_bytes = "48MiB"

[[process]]
name = "reader"
cgroup = "job"
program = '''
read data
read data
'''
"#;

/// Each limit reclaim is bracketed by `mm_vmscan_memcg_reclaim_begin/end`, as the host's trace
/// has it, and the ends add up to what its shrink events reclaimed.
#[test]
fn limit_reclaim_is_bracketed_by_memcg_reclaim_events() {
    let want: Vec<String> =
        ["mm_vmscan_memcg_reclaim_begin", "mm_vmscan_memcg_reclaim_end", "mm_vmscan_lru_shrink_inactive"]
            .map(String::from)
            .to_vec();
    let (r, text) = traced_text("linux-6.8", LIMITED, &want);
    let ev = parse(TraceFormat::Linux68, &text);
    let count = |n: &str| ev.iter().filter(|(e, _)| e == n).count();
    assert!(count("mm_vmscan_memcg_reclaim_begin") > 0);
    assert_eq!(count("mm_vmscan_memcg_reclaim_begin"), count("mm_vmscan_memcg_reclaim_end"));
    // Begin and end alternate, and every shrink event falls inside a pair.
    let mut open = false;
    for (e, _) in &ev {
        match e.as_str() {
            "mm_vmscan_memcg_reclaim_begin" => {
                assert!(!open, "nested limit reclaim");
                open = true;
            }
            "mm_vmscan_memcg_reclaim_end" => {
                assert!(open, "end without begin");
                open = false;
            }
            _ => assert!(open, "a shrink event outside a limit reclaim"),
        }
    }
    let ended = sum(&ev, "mm_vmscan_memcg_reclaim_end", 0, |_| true);
    assert_eq!(ended, sum(&ev, "mm_vmscan_lru_shrink_inactive", 2, |_| true));
    assert_eq!(ended, r.counter("pgsteal_anon") + r.counter("pgsteal_file"));
}

#[test]
fn eras_without_tracepoints_have_none() {
    for p in ["linux-2.4.9", "linux-2.4.23aa1", "linux-2.6.26"] {
        assert!(vmlab_core::profiles::find(p).unwrap().tracepoints.is_none(), "{p}");
    }
}

/// `vmlab reproduce SEED --trace DIR`: one file per run of a release with tracepoints, named by
/// the run's number and profile and recorded in its params; none for an older release.
#[test]
fn reproduce_traces_each_run_of_a_release_with_tracepoints() {
    use vmlab_core::reproduce::{mmap_sem, ReproduceOpts, TraceOpts};
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("reproduce-trace");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sets = ["filetree.0.mean=372MiB", "vars.files=1"].map(String::from).to_vec();
    let trace = Some(TraceOpts { dir: dir.clone(), events: Vec::new() });
    let o = ReproduceOpts { sets, trace, ..Default::default() };
    let (rep, _) = mmap_sem::run_table(&o, &["linux-2.6.26", "linux-6.8"], &[1]).expect("runs");
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    let traced: Vec<&RunReport> = rep.runs.iter().filter(|r| r.params.get("trace_file").is_some()).collect();
    assert!(!files.is_empty() && files.iter().all(|f| f.ends_with("-linux-6.8.trace")), "{files:?}");
    assert_eq!(traced.len(), files.len());
    assert!(traced.iter().all(|r| r.profile == "linux-6.8"));
    assert!(rep.runs.iter().any(|r| r.profile == "linux-2.6.26" && r.params.get("trace_file").is_none()));
    let text = std::fs::read_to_string(dir.join(&files[0])).unwrap();
    assert!(text.starts_with("# tracer: nop"), "{text}");
    // An event the release does not have is refused, naming the ones it has.
    let bad = TraceOpts { dir, events: vec!["mm_no_such_event".into()] };
    let o = ReproduceOpts { trace: Some(bad), ..Default::default() };
    let Err(e) = mmap_sem::run_table(&o, &["linux-6.8"], &[1]) else { panic!("an unknown event was accepted") };
    assert!(e.contains("mm_no_such_event") && e.contains("mm_vmscan_kswapd_wake"), "{e}");
}

/// `memcg_flush_stats`: in 6.8's form every limit reclaim's node pass flushes its target
/// (`prepare_scan_count`), so there are at least as many reader flushes as limit reclaims; with
/// the ratelimited flush and a `memory.stat` poll of 20 ms only the poll flushes between the 2 s
/// worker's, at most once in each 20 ms of the clock, fewer times than reclaim runs.
#[test]
fn memcg_flushes_are_traced_where_they_fall() {
    let flushes = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let sc = vmlab_core::workload::load_scenario_str("reclaim.toml", LIMITED, &sets).expect("loads");
        let buf = crate::common::TraceBuf::default();
        let events = ["memcg_flush_stats", "mm_vmscan_memcg_reclaim_begin"].map(String::from).to_vec();
        let w = FtraceWriter::new(Box::new(buf.clone()), TraceFormat::Linux68, &events).expect("writer");
        api::run(&sc, RunOpts { profile: Some("linux-6.8"), tracers: vec![Box::new(w)], ..Default::default() })
            .expect("runs");
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        parse(TraceFormat::Linux68, &text);
        let at = Regex::new(r" ([0-9]+)\.([0-9]{6}): memcg_flush_stats: memcg_id=[0-9]+ force=0 ").unwrap();
        let us: Vec<u64> = at
            .captures_iter(&text)
            .map(|c| c[1].parse::<u64>().unwrap() * 1_000_000 + c[2].parse::<u64>().unwrap())
            .collect();
        (us, text.matches("mm_vmscan_memcg_reclaim_begin").count())
    };
    let (every_pass, reclaims) = flushes(&[]);
    assert!(reclaims > 0);
    assert!(every_pass.len() >= reclaims, "{} flushes for {reclaims} limit reclaims", every_pass.len());
    let (polled, reclaims) = flushes(&["reclaim.memcg_flush_ratelimited=true", "reclaim.memcg_stat_poll_ms=20"]);
    assert!(!polled.is_empty() && polled.len() < reclaims, "{} poll flushes, {reclaims} reclaims", polled.len());
    let periods: Vec<u64> = polled.iter().map(|us| us / 20_000).collect();
    assert!(periods.windows(2).all(|w| w[0] < w[1]), "one poll flush per 20 ms: {periods:?}");
}
