use super::*;

/// The fields every event starts with, as the host's format files print them.
macro_rules! common_fields {
    () => {
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
"
    };
}

/// The host's (6.18) format files, as `cat events/.../format` printed them.
const SHRINK_FORMAT: &str = concat!(
    "name: mm_vmscan_lru_shrink_inactive
ID: 626
format:
",
    common_fields!(),
    "
\tfield:int nid;\toffset:8;\tsize:4;\tsigned:1;
\tfield:unsigned long nr_scanned;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_reclaimed;\toffset:24;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_dirty;\toffset:32;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_writeback;\toffset:40;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_congested;\toffset:48;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_immediate;\toffset:56;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_activate0;\toffset:64;\tsize:4;\tsigned:0;
\tfield:unsigned int nr_activate1;\toffset:68;\tsize:4;\tsigned:0;
\tfield:unsigned long nr_ref_keep;\toffset:72;\tsize:8;\tsigned:0;
\tfield:unsigned long nr_unmap_fail;\toffset:80;\tsize:8;\tsigned:0;
\tfield:int priority;\toffset:88;\tsize:4;\tsigned:1;
\tfield:int reclaim_flags;\toffset:92;\tsize:4;\tsigned:1;

print fmt: \"nid=%d nr_scanned=%ld\"
"
);

const WRITE_FORMAT: &str = concat!(
    "name: mm_vmscan_write_folio
ID: 628
format:
",
    common_fields!(),
    "
\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;
\tfield:int reclaim_flags;\toffset:16;\tsize:4;\tsigned:1;
"
);

const ACTIVATE_FORMAT: &str = concat!(
    "name: mm_lru_activate
ID: 620
format:
",
    common_fields!(),
    "
\tfield:struct folio * folio;\toffset:8;\tsize:8;\tsigned:0;
\tfield:unsigned long pfn;\toffset:16;\tsize:8;\tsigned:0;
"
);

fn layout() -> Layout {
    let f = |t: &str| parse_format(t).unwrap();
    Layout::new(Some(&f(SHRINK_FORMAT)), Some(&f(WRITE_FORMAT)), Some(&f(ACTIVATE_FORMAT)))
}

fn record(id: u16, pid: u32, len: usize, fields: &[(usize, u64, usize)]) -> Vec<u8> {
    let mut r = vec![0u8; len];
    r[0..2].copy_from_slice(&id.to_ne_bytes());
    r[4..8].copy_from_slice(&pid.to_ne_bytes());
    for &(off, v, size) in fields {
        r[off..off + size].copy_from_slice(&v.to_ne_bytes()[..size]);
    }
    r
}

/// nr_scanned, nr_reclaimed, nr_dirty, nr_writeback, nr_congested, act0, act1, flags.
fn shrink(pid: u32, v: [u64; 8]) -> Vec<u8> {
    let offs = [(16, 8), (24, 8), (32, 8), (40, 8), (48, 8), (64, 4), (68, 4), (92, 4)];
    let f: Vec<_> = offs.iter().zip(v).map(|(&(o, s), v)| (o, v, s)).collect();
    record(626, pid, 96, &f)
}

/// A ring-buffer page as trace_pipe_raw returns it, the records as small (type_len) events but
/// those marked large (type_len 0, length word), with a time extend and a discarded event.
fn page(records: &[(Vec<u8>, bool)], missed: Option<u64>) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&(30u32 | (5 << 5)).to_ne_bytes());
    d.extend_from_slice(&7u32.to_ne_bytes());
    for (r, large) in records {
        if *large {
            d.extend_from_slice(&(1u32 << 5).to_ne_bytes());
            d.extend_from_slice(&((r.len() + 4) as u32).to_ne_bytes());
        } else {
            d.extend_from_slice(&(((r.len() / 4) as u32) | (1 << 5)).to_ne_bytes());
        }
        d.extend_from_slice(r);
    }
    // A discarded event: padding with a non-zero delta and its length.
    d.extend_from_slice(&(29u32 | (3 << 5)).to_ne_bytes());
    d.extend_from_slice(&12u32.to_ne_bytes());
    d.extend_from_slice(&[0xee; 8]);
    let mut commit = d.len() as u64;
    let mut p = vec![0u8; 16];
    if let Some(m) = missed {
        commit |= MISSED_EVENTS | MISSED_STORED;
        d.extend_from_slice(&m.to_ne_bytes());
    }
    p[8..16].copy_from_slice(&commit.to_ne_bytes());
    p.extend_from_slice(&d);
    // The rest of the page, past `commit`, is stale data that must not be read.
    p.resize(4096, 0xab);
    p
}

#[test]
fn the_format_files_give_ids_offsets_and_sizes() {
    let f = parse_format(SHRINK_FORMAT).unwrap();
    assert_eq!(f.id, 626);
    assert_eq!(f.field("nr_activate1"), Some(Field { off: 68, size: 4 }));
    assert_eq!(f.field("reclaim_flags"), Some(Field { off: 92, size: 4 }));
    assert_eq!(parse_format(ACTIVATE_FORMAT).unwrap().field("folio"), Some(Field { off: 8, size: 8 }));
    assert!(parse_format("format:\n").is_err(), "no ID");
    // A kernel whose event lacks a counted field: that event is not used.
    let old = SHRINK_FORMAT.replace("nr_activate1", "nr_activate_file");
    assert!(Layout::new(Some(&parse_format(&old).unwrap()), None, None).shrink.is_none());
}

#[test]
fn a_page_of_events_sums_to_the_workloads_counters() {
    let l = layout();
    let (me, child) = (100, 4242);
    let anon = shrink(child, [32, 0, 0, 0, 0, 12, 0, 0x1 | 0x8]);
    let file = shrink(child, [32, 20, 9, 2, 3, 0, 5, 0x2 | 0x8]);
    let mine = shrink(me, [32, 32, 0, 0, 0, 0, 0, 0x2]);
    let swap_out = record(628, child, 24, &[(16, 0x9, 4)]);
    let file_write = record(628, child, 24, &[(16, 0xa, 4)]);
    let act = record(620, child, 24, &[(16, 0x1000, 8)]);
    let unknown = record(999, child, 24, &[]);
    let p = page(
        &[
            (anon, false),
            (file, true),
            (mine, false),
            (swap_out.clone(), false),
            (swap_out, true),
            (file_write, false),
            (act, false),
            (unknown, false),
        ],
        None,
    );
    let mut own = Own::default();
    // The folio at pfn 0x1000 has 16 pages.
    let mut pages = |pfn: u64| if pfn == 0x1000 { 16 } else { 1 };
    let missed = walk_page(&p, |ev| own.add(&l, ev, me.into(), &mut pages));
    assert_eq!(missed, 0);
    assert_eq!(own.shrink_calls, 2, "vmlab's own reclaim is left out");
    assert_eq!((own.scanned, own.reclaimed), ([32, 32], [0, 20]));
    assert_eq!(own.activated, [12, 5]);
    assert_eq!(own.unqueued_dirty, 4, "9 dirty or under writeback, 2 + 3 of them under writeback");
    assert_eq!((own.written, own.lru_activate, own.lru_activate_pages), ([2, 1], 1, 16));
    assert_eq!((own.events, own.supervisor, own.other), (6, 1, 1));
    let v = own_json(&Finished { own, lost: 0, instance: "/x".into() }, &|k| (k == "pgmajfault").then_some(7));
    let c = &v["counters"];
    assert_eq!((c["pgactivate"].as_u64(), c["pswpout"].as_u64()), (Some(12 + 5 + 16), Some(2)));
    assert_eq!((c["pgmajfault"].as_u64(), c.get("workingset_refault_file")), (Some(7), None));
    assert_eq!(v["complete"], json!(true));
    assert!(v["notes"]["pswpout"].as_str().is_some_and(|n| n.contains("folios")));
}

#[test]
fn lost_events_are_found_in_the_page_and_the_stats() {
    let p = page(&[(record(620, 1, 24, &[]), false)], Some(37));
    let mut n = 0;
    assert_eq!(walk_page(&p, |_| n += 1), 37);
    assert_eq!(n, 1, "the missed count after the data is not an event");
    let stats = "entries: 0\noverrun: 5\ncommit overrun: 0\nbytes: 0\noldest event ts:     0.000000\nnow ts:   214.869828\ndropped events: 11\nread events: 40\n";
    assert_eq!(lost_in_stats(stats), 16);
    let own = Own { missed: 2, ..Own::default() };
    let v = own_json(&Finished { own, lost: 16, instance: "/x".into() }, &|_| None);
    assert_eq!((v["complete"].clone(), v["lost_events"].as_u64()), (json!(false), Some(16)));
}

#[test]
fn a_short_or_garbled_page_stops_without_a_panic() {
    let mut p = page(&[(record(620, 1, 24, &[]), false)], None);
    // A length word pointing past the data.
    p[16 + 8] = 0;
    p[16 + 12..16 + 16].copy_from_slice(&4000u32.to_ne_bytes());
    let mut n = 0;
    walk_page(&p, |_| n += 1);
    assert_eq!(n, 0);
    assert_eq!(walk_page(&p[..10], |_| n += 1), 0);
}

#[test]
fn a_missing_or_unwritable_tracefs_is_an_error_not_a_panic() {
    let base = std::env::temp_dir().join(format!("vmlab-tracefs-test-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    let e = Tracer::start_at(&base).err().unwrap_or_default();
    assert!(e.contains("cannot create the tracefs instance"), "{e}");
    // `instances` that is not a directory: mkdir fails even for root.
    std::fs::write(base.join("instances"), "").unwrap();
    let e2 = Tracer::start_at(&base).err().unwrap_or_default();
    // An instance made where its files are missing: set-up fails and the instance goes.
    std::fs::remove_file(base.join("instances")).unwrap();
    std::fs::create_dir(base.join("instances")).unwrap();
    let e3 = Tracer::start_at(&base).err().unwrap_or_default();
    let left = std::fs::read_dir(base.join("instances")).map(|d| d.count()).unwrap_or(9);
    let _ = std::fs::remove_dir_all(&base);
    assert!(e2.contains("cannot create the tracefs instance"), "{e2}");
    assert!(e3.contains("has no usable vmscan:mm_vmscan_lru_shrink_inactive event"), "{e3}");
    assert_eq!(left, 0, "the instance is removed when its set-up fails");
}

#[test]
fn a_folios_pages_are_its_head_and_the_tails_after_it() {
    // kpageflags from pfn 100: a small page, an order-2 folio (head + 3 tails), another head.
    let map = [0, KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL, KPF_COMPOUND_TAIL, KPF_COMPOUND_TAIL, KPF_COMPOUND_HEAD, 0];
    let mut flags = |pfn: u64, buf: &mut [u64]| {
        let from = (pfn - 100) as usize;
        let n = buf.len().min(map.len().saturating_sub(from));
        buf[..n].copy_from_slice(&map[from..from + n]);
        n
    };
    assert_eq!(folio_pages(100, &mut flags), 1);
    assert_eq!(folio_pages(101, &mut flags), 4);
    assert_eq!(folio_pages(105, &mut flags), 1, "a head with no tails read after it");
    // Unreadable (not root, no file): one page.
    assert_eq!(folio_pages(101, &mut |_, _| 0), 1);
}
