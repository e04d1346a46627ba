//! The workload's own reclaim counters, from a tracefs instance of the run's own. `/proc/vmstat`
//! is host-wide and a v1 group's `memory.stat` has no `pgscan_*`, `pgsteal_*`, `pgactivate` or
//! `pswpout`; but memcg limit reclaim runs in the charging task, so the reclaim tracepoints that
//! fire in the workload's tasks are the workload's own reclaim (docs/REAL.md, "The workload's
//! own counters").
//!
//! Tasks: `set_event_pid` holds vmlab's pid with the `event-fork` option, so every process and
//! thread the supervisor forks is traced from its first instruction and no other task on the
//! host is; vmlab's own events are left out when counting. ftrace has no per-cgroup event
//! filter (perf's `-G` is perf's), and the children join the cgroup only after they start.
//!
//! The per-CPU binary buffers (`trace_pipe_raw`) are read by the supervisor every time it wakes
//! (≤ 20 ms): no formatting in the kernel, no thread (the supervisor forks, so it stays
//! single-threaded). The buffer does not overwrite (`overwrite` off), so a full buffer drops new
//! events and says how many in `per_cpu/cpu*/stats`, which `finish` reads.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Where tracefs is mounted, newest first.
const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

const SHRINK: (&str, &str) = ("vmscan", "mm_vmscan_lru_shrink_inactive");
const WRITE: (&str, &str) = ("vmscan", "mm_vmscan_write_folio");
const ACTIVATE: (&str, &str) = ("pagemap", "mm_lru_activate");

/// Per-CPU buffer: anon-overcommit writes ~50,000 folios a second (28 bytes each in the
/// buffer), so 8 MiB holds minutes even if the supervisor is kept off the CPU.
const BUFFER_KB: u32 = 8192;

/// `reclaim_flags` bits (include/trace/events/vmscan.h).
const RECLAIM_WB_ANON: u64 = 0x1;
const RECLAIM_WB_FILE: u64 = 0x2;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    off: usize,
    size: usize,
}

impl Field {
    fn get(self, ev: &[u8]) -> u64 {
        let Some(b) = ev.get(self.off..self.off + self.size) else { return 0 };
        match self.size {
            1 => b[0] as u64,
            2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
            4 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64,
            8 => u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => 0,
        }
    }
}

/// An event's `format` file: its id and its fields' offsets and sizes.
#[derive(Debug, PartialEq)]
pub struct Format {
    pub id: u64,
    fields: Vec<(String, Field)>,
}

impl Format {
    fn field(&self, name: &str) -> Option<Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }
}

pub fn parse_format(text: &str) -> Result<Format, String> {
    let mut id = None;
    let mut fields = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        }
        let Some(rest) = line.strip_prefix("field:") else { continue };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl.rsplit([' ', '*']).next().unwrap_or("");
        let name = name.split('[').next().unwrap_or(name);
        let num = |key: &str| -> Option<usize> {
            rest.split(';').map(str::trim).find_map(|p| p.strip_prefix(key)?.trim().parse().ok())
        };
        if let (Some(off), Some(size)) = (num("offset:"), num("size:")) {
            fields.push((name.to_string(), Field { off, size }));
        }
    }
    let id = id.ok_or("no `ID:` line")?;
    Ok(Format { id, fields })
}

/// `mm_vmscan_lru_shrink_inactive`'s fields that the counters read.
#[derive(Debug)]
struct Shrink {
    id: u64,
    scanned: Field,
    reclaimed: Field,
    dirty: Field,
    writeback: Field,
    congested: Field,
    immediate: Field,
    activate: [Field; 2],
    flags: Field,
}

/// Where to find each counted field in an event record, from the kernel's own format files.
#[derive(Debug, Default)]
pub struct Layout {
    pid: Option<Field>,
    shrink: Option<Shrink>,
    write: Option<(u64, Field)>,
    activate: Option<(u64, Option<Field>)>,
}

impl Layout {
    pub fn new(shrink: Option<&Format>, write: Option<&Format>, activate: Option<&Format>) -> Layout {
        let pid = [shrink, write, activate].into_iter().flatten().find_map(|f| f.field("common_pid"));
        let shrink = shrink.and_then(|f| {
            Some(Shrink {
                id: f.id,
                scanned: f.field("nr_scanned")?,
                reclaimed: f.field("nr_reclaimed")?,
                dirty: f.field("nr_dirty")?,
                writeback: f.field("nr_writeback")?,
                congested: f.field("nr_congested")?,
                immediate: f.field("nr_immediate")?,
                activate: [f.field("nr_activate0")?, f.field("nr_activate1")?],
                flags: f.field("reclaim_flags")?,
            })
        });
        let write = write.and_then(|f| Some((f.id, f.field("reclaim_flags")?)));
        Layout { pid, shrink, write, activate: activate.map(|f| (f.id, f.field("pfn"))) }
    }
}

/// The workload's events summed. Index 0 is anon, 1 file, as the kernel's `nr_activate0/1`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Own {
    pub shrink_calls: u64,
    pub scanned: [u64; 2],
    pub reclaimed: [u64; 2],
    pub activated: [u64; 2],
    /// File pages dirty but not under writeback that reached `shrink_folio_list`'s dirty test.
    pub unqueued_dirty: u64,
    /// `nr_immediate`: the writeback case 1, kswapd's only.
    pub immediate_case1: u64,
    pub lru_activate: u64,
    /// Their pages, each folio's size read from /proc/kpageflags when the event is read.
    pub lru_activate_pages: u64,
    pub written: [u64; 2],
    /// Records counted; records of vmlab's own pid (left out); records of unknown ids.
    pub events: u64,
    pub supervisor: u64,
    pub other: u64,
    /// Events the ring buffer lost before a page was read (the page's missed-events count).
    pub missed: u64,
}

impl Own {
    /// One event record (from `common_type` on); `pages` gives the size of the folio at a pfn.
    pub fn add(&mut self, l: &Layout, ev: &[u8], supervisor: u64, pages: &mut dyn FnMut(u64) -> u64) {
        let ty = Field { off: 0, size: 2 }.get(ev);
        if l.pid.is_some_and(|p| p.get(ev) == supervisor) {
            self.supervisor += 1;
            return;
        }
        if let Some(s) = l.shrink.as_ref().filter(|s| s.id == ty) {
            let file = (s.flags.get(ev) & RECLAIM_WB_FILE != 0) as usize;
            self.shrink_calls += 1;
            self.scanned[file] += s.scanned.get(ev);
            self.reclaimed[file] += s.reclaimed.get(ev);
            self.activated[0] += s.activate[0].get(ev);
            self.activated[1] += s.activate[1].get(ev);
            self.immediate_case1 += s.immediate.get(ev);
            // nr_dirty is dirty or under writeback; nr_writeback (case 2) and nr_congested (the
            // case-3 folios, waited on and retried) are under writeback: the rest were dirty.
            let wb = s.writeback.get(ev) + s.congested.get(ev);
            self.unqueued_dirty += s.dirty.get(ev).saturating_sub(wb);
        } else if let Some((_, flags)) = l.write.filter(|(id, _)| *id == ty) {
            self.written[(flags.get(ev) & RECLAIM_WB_ANON == 0) as usize] += 1;
        } else if let Some((_, pfn)) = l.activate.filter(|(id, _)| *id == ty) {
            self.lru_activate += 1;
            self.lru_activate_pages += pfn.map_or(1, |f| pages(f.get(ev)));
        } else {
            self.other += 1;
            return;
        }
        self.events += 1;
    }
}

/// Size mask and flags of a page header's `commit` word (kernel/trace/ring_buffer.c).
const COMMIT_SIZE: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;

/// Each event record of one ring-buffer page as `trace_pipe_raw` gives it (a u64 time stamp, a
/// u64 `commit` with the data's size, then the events: a u32 header of `type_len:5`,
/// `time_delta:27`; `events/header_page` and `header_event` describe it). Returns the events
/// the buffer lost before this page, when it says.
pub fn walk_page(page: &[u8], mut each: impl FnMut(&[u8])) -> u64 {
    let u32_at = |b: &[u8], i: usize| b.get(i..i + 4).map_or(0, |x| u32::from_ne_bytes([x[0], x[1], x[2], x[3]]));
    let Some(c) = page.get(8..16) else { return 0 };
    let commit = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    let size = ((commit & COMMIT_SIZE) as usize).min(page.len() - 16);
    let data = &page[16..16 + size];
    let mut i = 0;
    while i + 4 <= data.len() {
        let h = u32_at(data, i);
        let (type_len, delta) = (h & 31, h >> 5);
        let len = match type_len {
            // Padding: to the end of the page when its delta is 0, else a discarded event.
            29 if delta == 0 => break,
            29 | 0 => u32_at(data, i + 4) as usize,
            30 | 31 => 4,
            n => n as usize * 4,
        };
        if len == 0 || i + 4 + len > data.len() {
            break;
        }
        match type_len {
            0 => each(&data[i + 8..i + 4 + len]),
            1..=28 => each(&data[i + 4..i + 4 + len]),
            _ => {}
        }
        i += 4 + len;
    }
    let mut missed = 0;
    if commit & MISSED_STORED != 0 {
        missed = page.get(16 + size..24 + size).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])));
    }
    if commit & MISSED_EVENTS != 0 {
        missed = missed.max(1);
    }
    missed
}

/// `overrun` plus `dropped events` of one CPU's `stats` file: events the buffer never gave us.
pub fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events").then(|| v.trim().parse::<u64>().ok())?
        })
        .sum()
}

/// /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h).
const KPF_COMPOUND_HEAD: u64 = 1 << 15;
const KPF_COMPOUND_TAIL: u64 = 1 << 16;

/// The pages of the folio whose head is at `pfn`: 1, or the head and the tail pages after it
/// (`flags` reads `n` entries of /proc/kpageflags from a pfn into a buffer, returning how many).
pub fn folio_pages(pfn: u64, flags: &mut dyn FnMut(u64, &mut [u64]) -> usize) -> u64 {
    let mut buf = [0u64; 512];
    if flags(pfn, &mut buf[..1]) < 1 || buf[0] & KPF_COMPOUND_HEAD == 0 {
        return 1;
    }
    // At most an order-9 folio (a PMD's worth): larger ones are hugetlb, not on an LRU.
    let n = flags(pfn + 1, &mut buf[..511]);
    1 + buf[..n].iter().take_while(|f| *f & KPF_COMPOUND_TAIL != 0).count() as u64
}

/// `folio_pages` on the host's /proc/kpageflags (root only; 1 page when it cannot be read).
fn kpageflags(file: Option<&File>) -> impl FnMut(u64, &mut [u64]) -> usize + '_ {
    move |pfn, buf| {
        let Some(f) = file else { return 0 };
        let mut bytes = vec![0u8; buf.len() * 8];
        let n = std::os::unix::fs::FileExt::read_at(f, &mut bytes, pfn * 8).unwrap_or(0) / 8;
        for (i, b) in bytes.chunks_exact(8).take(n).enumerate() {
            buf[i] = u64::from_ne_bytes(b.try_into().unwrap_or([0; 8]));
        }
        n
    }
}

pub struct Tracer {
    dir: PathBuf,
    kpageflags: Option<File>,
    layout: Layout,
    pipes: Vec<File>,
    page: Vec<u8>,
    supervisor: u64,
    /// What was enabled, and what the kernel lacks.
    pub enabled: Vec<String>,
    pub missing: Vec<String>,
    pub own: Own,
}

impl Tracer {
    /// A tracefs instance `vmlab-real-<pid>` tracing this process's future children, in the
    /// tracefs at `$VMLAB_TRACEFS` if set (a tracefs mounted elsewhere; tests give a bad one).
    pub fn start() -> Result<Tracer, String> {
        if let Some(r) = std::env::var_os("VMLAB_TRACEFS") {
            return Tracer::start_at(Path::new(&r));
        }
        let root = ROOTS.iter().map(Path::new).find(|r| r.join("instances").is_dir()).ok_or_else(|| {
            format!("no tracefs with instances at {} (mount -t tracefs nodev /sys/kernel/tracing)", ROOTS.join(" or "))
        })?;
        Tracer::start_at(root)
    }

    pub fn start_at(root: &Path) -> Result<Tracer, String> {
        let pid = std::process::id();
        let dir = root.join("instances").join(format!("{}{pid}", super::sweep::PREFIX));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create the tracefs instance {}: {e}", dir.display()))?;
        // From here on, Drop removes the instance whatever fails.
        let mut t = Tracer {
            dir,
            layout: Layout::default(),
            kpageflags: File::open("/proc/kpageflags").ok(),
            pipes: Vec::new(),
            page: Vec::new(),
            supervisor: pid as u64,
            enabled: Vec::new(),
            missing: Vec::new(),
            own: Own::default(),
        };
        t.set_up()?;
        Ok(t)
    }

    fn set_up(&mut self) -> Result<(), String> {
        let d = self.dir.clone();
        let mut formats = Vec::new();
        for (sys, ev) in [SHRINK, WRITE, ACTIVATE] {
            let f = std::fs::read_to_string(d.join("events").join(sys).join(ev).join("format"));
            match f.map_err(|e| e.to_string()).and_then(|t| parse_format(&t)) {
                Ok(f) => {
                    formats.push(Some(f));
                    self.enabled.push(format!("{sys}:{ev}"));
                }
                Err(_) => {
                    formats.push(None);
                    self.missing.push(format!("{sys}:{ev}"));
                }
            }
        }
        self.layout = Layout::new(formats[0].as_ref(), formats[1].as_ref(), formats[2].as_ref());
        if self.layout.shrink.is_none() {
            return Err(format!("{} has no usable {}:{} event", d.display(), SHRINK.0, SHRINK.1));
        }
        super::write_control(&d.join("options/overwrite"), "0")?;
        super::write_control(&d.join("options/event-fork"), "1")?;
        super::write_control(&d.join("buffer_size_kb"), &BUFFER_KB.to_string())?;
        super::write_control(&d.join("set_event_pid"), &self.supervisor.to_string())?;
        let sub = std::fs::read_to_string(d.join("buffer_subbuf_size_kb"));
        let kb: usize = sub.ok().and_then(|s| s.trim().parse().ok()).unwrap_or(4);
        self.page = vec![0; kb * 1024];
        for cpu in 0.. {
            let p = d.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            if !p.exists() {
                break;
            }
            let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&p);
            self.pipes.push(f.map_err(|e| format!("cannot open {}: {e}", p.display()))?);
        }
        for ev in &self.enabled {
            let (sys, name) = ev.split_once(':').unwrap_or(("", ""));
            super::write_control(&d.join("events").join(sys).join(name).join("enable"), "1")?;
        }
        super::write_control(&d.join("tracing_on"), "1")
    }

    /// Read what the buffers hold now (called by the supervisor each time it wakes).
    pub fn poll(&mut self) {
        let Tracer { pipes, page, layout, own, supervisor, kpageflags: kpf, .. } = self;
        let mut flags = kpageflags(kpf.as_ref());
        let mut pages = |pfn| folio_pages(pfn, &mut flags);
        for f in pipes.iter_mut() {
            // A read gives one page, or EAGAIN when the CPU's buffer is empty.
            while let Ok(n) = f.read(page) {
                if n == 0 {
                    break;
                }
                let missed = walk_page(&page[..n], |ev| own.add(layout, ev, *supervisor, &mut pages));
                own.missed += missed;
            }
        }
    }

    /// Stop tracing, read the rest, and say how many events were lost.
    pub fn finish(&mut self) -> Finished {
        let _ = super::write_control(&self.dir.join("tracing_on"), "0");
        self.poll();
        let lost: u64 = (0..self.pipes.len())
            .map(|c| std::fs::read_to_string(self.dir.join(format!("per_cpu/cpu{c}/stats"))).unwrap_or_default())
            .map(|t| lost_in_stats(&t))
            .sum();
        Finished { own: self.own.clone(), lost: lost.max(self.own.missed), instance: self.dir.clone() }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        let _ = super::write_control(&self.dir.join("tracing_on"), "0");
        for ev in &self.enabled {
            let (sys, name) = ev.split_once(':').unwrap_or(("", ""));
            let _ = super::write_control(&self.dir.join("events").join(sys).join(name).join("enable"), "0");
        }
        // An instance with an open file cannot be removed.
        self.pipes.clear();
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("vmlab real: could not remove the tracefs instance {}: {e}", self.dir.display());
        }
    }
}

/// Instances an earlier, killed run left (`vmlab-real-<pid>` with its pid gone).
pub fn sweep(done: &mut Vec<String>, problems: &mut Vec<String>) {
    for root in ROOTS.iter().map(|r| Path::new(r).join("instances")) {
        let Ok(rd) = std::fs::read_dir(&root) else { continue };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !super::sweep::orphaned(&name) {
                continue;
            }
            match std::fs::remove_dir(e.path()) {
                Ok(()) => done.push(format!("removed the tracefs instance {}", e.path().display())),
                Err(err) => {
                    problems.push(format!("could not remove the tracefs instance {}: {err}", e.path().display()))
                }
            }
        }
        // /sys/kernel/debug/tracing is the same tracefs when both are mounted.
        break;
    }
}

pub struct Finished {
    pub own: Own,
    pub lost: u64,
    pub instance: PathBuf,
}

/// What each `own` counter counts and cannot, in words (the JSON's `own.notes`).
const NOTES: [(&str, &str); 10] = [
    ("pgscan_anon", "nr_scanned of mm_vmscan_lru_shrink_inactive with RECLAIM_WB_ANON in the workload's tasks (limit reclaim runs in the charging task); pages, as PGSCAN_ANON. A call that isolates nothing counts PGSCAN but returns before the tracepoint"),
    ("pgscan_file", "the same with RECLAIM_WB_FILE"),
    ("pgsteal_anon", "nr_reclaimed of the same events (PGSTEAL_ANON's count, pages)"),
    ("pgsteal_file", "the same with RECLAIM_WB_FILE"),
    ("pgactivate", "shrink_folio_list's activations (nr_activate_anon + nr_activate_file, pages) plus the pages of the folios of mm_lru_activate in the workload's tasks; that event fires where a per-CPU batch drains (queued by any task on that CPU) and gives no folio size: the size is the folio's at its pfn in /proc/kpageflags when the event is read (<= 20 ms later; 1 page where that cannot be read)"),
    ("nr_vmscan_immediate_reclaim", "nr_dirty - nr_writeback - nr_congested of the same events: file folios dirty and not under writeback; NR_VMSCAN_IMMEDIATE counts those that then pass folio_check_references and unmapping, so this is its upper bound (equal when no dirty folio is referenced or mapped)"),
    ("pswpout", "mm_vmscan_write_folio of anon folios in the workload's tasks (pageout); counts folios, not pages, and also folios that then went to zswap or were zero-filled (swap_writeout counts neither as PSWPOUT)"),
    ("pgmajfault", "the cgroup's memory.stat delta (counted beside the vmstat item, in the faulting task's group)"),
    ("workingset_refault_anon", "the cgroup's memory.stat delta"),
    ("workingset_refault_file", "the cgroup's memory.stat delta"),
];

/// The `own` counters in the order the text report prints them.
pub fn counter_names() -> impl Iterator<Item = &'static str> {
    NOTES.iter().map(|(k, _)| *k)
}

/// What the trace cannot give, in words (the JSON's `own.not_counted`).
const NOT_COUNTED: &str = "pswpin (counted at read completion, swap_read_end, in interrupt context for async I/O), pgrotated (folio_end_writeback -> folio_rotate_reclaimable -> lru_move_tail, at writeback completion, not in a task of the workload; no tracepoint), workingset_activate/restore (workingset_refault has no tracepoint; v1 memory.stat lacks them): host-wide only";

/// The `own` object of the JSON: the trace's counters, and the cgroup's where `memory.stat`
/// has them (`cg`: the group's event deltas).
pub fn own_json(f: &Finished, cg: &dyn Fn(&str) -> Option<u64>) -> Value {
    let o = &f.own;
    let mut counters = serde_json::Map::new();
    let mut put = |k: &str, v: u64| {
        counters.insert(k.to_string(), json!(v));
    };
    put("pgscan_anon", o.scanned[0]);
    put("pgscan_file", o.scanned[1]);
    put("pgsteal_anon", o.reclaimed[0]);
    put("pgsteal_file", o.reclaimed[1]);
    put("pgactivate", o.activated[0] + o.activated[1] + o.lru_activate_pages);
    put("nr_vmscan_immediate_reclaim", o.unqueued_dirty);
    put("pswpout", o.written[0]);
    for k in ["pgmajfault", "workingset_refault_anon", "workingset_refault_file"] {
        if let Some(v) = cg(k) {
            put(k, v);
        }
    }
    let notes: serde_json::Map<String, Value> =
        NOTES.iter().filter(|(k, _)| counters.contains_key(*k)).map(|(k, v)| (k.to_string(), json!(v))).collect();
    json!({
        "complete": f.lost == 0,
        "counters": counters,
        "parts": {
            "shrink_inactive_calls": o.shrink_calls,
            "activate_reclaim_anon": o.activated[0],
            "activate_reclaim_file": o.activated[1],
            "lru_activate_folios": o.lru_activate,
            "lru_activate_pages": o.lru_activate_pages,
            "write_folio_file": o.written[1],
            "nr_immediate_case1": o.immediate_case1,
        },
        "events": o.events,
        "lost_events": f.lost,
        "supervisor_events": o.supervisor,
        "method": format!("tracefs instance {} (removed after the run): set_event_pid = vmlab's pid with event-fork (the workload's processes and threads; vmlab's own events left out), per-CPU trace_pipe_raw read every <= 20 ms, overwrite off", f.instance.display()),
        "notes": notes,
        "not_counted": NOT_COUNTED,
    })
}

#[cfg(test)]
mod tests;
