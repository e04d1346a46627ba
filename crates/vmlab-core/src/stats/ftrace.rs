//! The run's tracepoints as the kernel's ftrace `trace` file prints them: a
//! `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS` line per event, FIELDS in the `TP_printk` of
//! the profile's release (`include/trace/events/vmscan.h`, `kmem.h`, `filemap.h`), so the
//! kernel's `Documentation/trace/postprocess/trace-vmscan-postprocess.pl` reads it. A release
//! prints only the events it had (docs/notes/procfs.md lists them and their sources).

use std::any::Any;
use std::fmt::Write as _;
use std::io::Write;

use crate::kernel::Kernel;
use crate::mm_types::Pfn;
use crate::trace::{Tracepoint, Tracer};

/// Whose tracepoint formats a release prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// 2.6.36: the vmscan events of Mel Gorman's 2010 series, no shrink_inactive yet;
    /// `mm_page_free_direct`; no line flags column.
    Linux2636,
    /// 2.6.37/38: 2.6.36's, with `mm_vmscan_lru_shrink_inactive` (nid zid ... flags).
    Linux2638,
    /// 6.8: classzone/lru in lru_isolate, write_folio, shrink_active, filemap events, and the
    /// irq-info flags column (default output since 3.x).
    Linux68,
}

const EVENTS_2638: &[&str] = &[
    "mm_page_alloc",
    "mm_page_free_direct",
    "mm_vmscan_kswapd_sleep",
    "mm_vmscan_kswapd_wake",
    "mm_vmscan_wakeup_kswapd",
    "mm_vmscan_direct_reclaim_begin",
    "mm_vmscan_direct_reclaim_end",
    "mm_vmscan_lru_isolate",
    "mm_vmscan_writepage",
    "wbc_writepage",
    "mm_vmscan_lru_shrink_inactive",
];

impl TraceFormat {
    /// The events this release has, by name.
    pub fn events(self) -> &'static [&'static str] {
        match self {
            // 2.6.37 added shrink_inactive; the rest is 2.6.36's, in the same order.
            TraceFormat::Linux2636 => &EVENTS_2638[..EVENTS_2638.len() - 1],
            TraceFormat::Linux2638 => EVENTS_2638,
            TraceFormat::Linux68 => &[
                "mm_page_alloc",
                "mm_page_free",
                "mm_filemap_add_to_page_cache",
                "mm_filemap_delete_from_page_cache",
                "mm_vmscan_kswapd_sleep",
                "mm_vmscan_kswapd_wake",
                "mm_vmscan_wakeup_kswapd",
                "mm_vmscan_direct_reclaim_begin",
                "mm_vmscan_direct_reclaim_end",
                "mm_vmscan_memcg_reclaim_begin",
                "mm_vmscan_memcg_reclaim_end",
                "mm_vmscan_lru_isolate",
                "mm_vmscan_write_folio",
                "mm_vmscan_lru_shrink_inactive",
                "mm_vmscan_lru_shrink_active",
                "mm_vmscan_throttled",
                "writeback_dirty_folio",
                "wbc_writepage",
                "memcg_flush_stats",
            ],
        }
    }

    fn has(self, name: &str) -> bool {
        self.events().contains(&name)
    }
}

/// Writes tracepoints to `out` as ftrace text. `events`: the names to keep (all when empty).
pub struct FtraceWriter {
    out: std::io::BufWriter<Box<dyn Write>>,
    fmt: TraceFormat,
    events: Vec<String>,
    /// Task index → (pid, comm).
    comms: Vec<Option<(u32, String)>>,
    line: String,
    pub lines: u64,
    pub error: Option<std::io::Error>,
}

impl FtraceWriter {
    /// A writer for `fmt`, keeping only `events` (all when empty); an unknown name is an error
    /// naming the release's events.
    pub fn new(out: Box<dyn Write>, fmt: TraceFormat, events: &[String]) -> Result<FtraceWriter, String> {
        if let Some(bad) = events.iter().find(|e| !fmt.has(e)) {
            return Err(format!("no tracepoint `{bad}` in this release; it has: {}", fmt.events().join(", ")));
        }
        let mut w = FtraceWriter {
            out: std::io::BufWriter::new(out),
            fmt,
            events: events.to_vec(),
            comms: Vec::new(),
            line: String::new(),
            lines: 0,
            error: None,
        };
        let header = match fmt {
            TraceFormat::Linux68 => {
                "# tracer: nop\n#\n#                                _-----=> irqs-off/BH-disabled\n#                               / _----=> need-resched\n#                              | / _---=> hardirq/softirq\n#                              || / _--=> preempt-depth\n#                              ||| / _-=> migrate-disable\n#                              |||| /     delay\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n"
            }
            _ => "# tracer: nop\n#\n#           TASK-PID    CPU#    TIMESTAMP  FUNCTION\n#              | |       |          |         |\n",
        };
        w.write(header);
        Ok(w)
    }

    /// `--trace FILE [--events ...]`: a writer into a new FILE; the error says which option failed.
    pub fn create(file: &std::path::Path, fmt: TraceFormat, events: &[String]) -> Result<FtraceWriter, String> {
        let out = std::fs::File::create(file).map_err(|e| format!("--trace {}: {e}", file.display()))?;
        FtraceWriter::new(Box::new(out), fmt, events).map_err(|m| format!("--events: {m}"))
    }

    fn write(&mut self, s: &str) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(s.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    /// `struct page *` as %p shows it: the x86-64 vmemmap address of the pfn's 64-byte page.
    fn page_ptr(pfn: Pfn) -> String {
        format!("{:016x}", 0xffff_ea00_0000_0000u64 + pfn as u64 * 64)
    }

    /// A disk's backing_dev_info as `dev_name(bdi->dev)` prints it: the SCSI disk majors
    /// (`sda` 8:0, `sdb` 8:16, ...).
    fn bdi(disk: usize) -> String {
        format!("8:{}", disk * 16)
    }

    /// `jiffies` at simulated time `ns`: HZ=1000, counted from INITIAL_JIFFIES (five minutes
    /// before wrapping), as a 64-bit kernel's `unsigned long` holds it.
    fn jiffies(ns: u64) -> u64 {
        (ns / 1_000_000).wrapping_sub(300 * 1000)
    }

    fn pfn(&self, pfn: Pfn) -> String {
        match self.fmt {
            TraceFormat::Linux68 => format!("0x{pfn:x}"),
            _ => pfn.to_string(),
        }
    }

    /// The event's name and fields in this release, `None` when it has no such event.
    fn format(&self, ev: &Tracepoint) -> Option<(&'static str, String)> {
        let f = self.fmt;
        let modern = f == TraceFormat::Linux68;
        let wb =
            |file: bool| if file { "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC" } else { "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC" };
        Some(match *ev {
            Tracepoint::MmPageAlloc { order, migratetype, pfn, gfp, .. } => (
                "mm_page_alloc",
                format!(
                    "page={} pfn={} order={order} migratetype={} gfp_flags={}",
                    Self::page_ptr(pfn),
                    self.pfn(pfn),
                    migratetype as u32,
                    gfp.name()
                ),
            ),
            Tracepoint::MmPageFree { pfn, order, .. } => (
                if modern { "mm_page_free" } else { "mm_page_free_direct" },
                format!("page={} pfn={} order={order}", Self::page_ptr(pfn), self.pfn(pfn)),
            ),
            Tracepoint::FilemapAdd { ino, pfn, index, order } if modern => (
                "mm_filemap_add_to_page_cache",
                format!("dev 0:0 ino {ino:x} pfn=0x{pfn:x} ofs={} order={order}", index * 4096),
            ),
            Tracepoint::FilemapDelete { ino, pfn, index } if modern => (
                "mm_filemap_delete_from_page_cache",
                format!("dev 0:0 ino {ino:x} pfn=0x{pfn:x} ofs={} order=0", index * 4096),
            ),
            Tracepoint::WakeupKswapd { nid, zid, order, gfp } => (
                "mm_vmscan_wakeup_kswapd",
                if modern {
                    format!("nid={nid} order={order} gfp_flags={}", gfp.name())
                } else {
                    format!("nid={nid} zid={zid} order={order}")
                },
            ),
            Tracepoint::KswapdWake { nid, order } => ("mm_vmscan_kswapd_wake", format!("nid={nid} order={order}")),
            Tracepoint::KswapdSleep { nid } => ("mm_vmscan_kswapd_sleep", format!("nid={nid}")),
            Tracepoint::DirectReclaimBegin { order, may_writepage, gfp } => (
                "mm_vmscan_direct_reclaim_begin",
                if modern {
                    format!("order={order} gfp_flags={}", gfp.name())
                } else {
                    format!("order={order} may_writepage={} gfp_flags={}", may_writepage as u32, gfp.name())
                },
            ),
            Tracepoint::DirectReclaimEnd { nr_reclaimed } => {
                ("mm_vmscan_direct_reclaim_end", format!("nr_reclaimed={nr_reclaimed}"))
            }
            Tracepoint::MemcgReclaimBegin { order, gfp } => {
                ("mm_vmscan_memcg_reclaim_begin", format!("order={order} gfp_flags={}", gfp.name()))
            }
            Tracepoint::MemcgReclaimEnd { nr_reclaimed } => {
                ("mm_vmscan_memcg_reclaim_end", format!("nr_reclaimed={nr_reclaimed}"))
            }
            Tracepoint::LruIsolate { classzone, order, mode, nr_requested, nr_scanned, nr_skipped, nr_taken, lru } => (
                "mm_vmscan_lru_isolate",
                if modern {
                    const LRU: [&str; 5] = ["inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable"];
                    format!(
                        "isolate_mode={mode} classzone={classzone} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_skipped={nr_skipped} nr_taken={nr_taken} lru={}",
                        LRU.get(lru).unwrap_or(&"unevictable")
                    )
                } else {
                    // 2.6.36's lumpy reclaim: the pages taken around each tail page.
                    format!(
                        "isolate_mode={mode} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} contig_taken={nr_skipped} contig_dirty=0 contig_failed=0"
                    )
                },
            ),
            Tracepoint::Writepage { pfn, file } => (
                if modern { "mm_vmscan_write_folio" } else { "mm_vmscan_writepage" },
                format!("page={} pfn={} flags={}", Self::page_ptr(pfn), self.pfn(pfn), wb(file)),
            ),
            Tracepoint::LruShrinkInactive { nid, zid, nr_scanned, nr_reclaimed, priority, file, stat: s } => (
                "mm_vmscan_lru_shrink_inactive",
                if modern {
                    format!(
                        "nid={nid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} nr_dirty={} nr_writeback={} nr_congested={} nr_immediate={} nr_activate_anon={} nr_activate_file={} nr_ref_keep={} nr_unmap_fail={} priority={priority} flags={}",
                        s.nr_dirty,
                        s.nr_writeback,
                        s.nr_congested,
                        s.nr_immediate,
                        s.nr_activate[0],
                        s.nr_activate[1],
                        s.nr_ref_keep,
                        s.nr_unmap_fail,
                        wb(file)
                    )
                } else {
                    format!(
                        "nid={nid} zid={zid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} priority={priority} flags={}",
                        wb(file)
                    )
                },
            ),
            Tracepoint::LruShrinkActive { nid, nr_taken, nr_deactivated, nr_referenced, priority, file } => (
                "mm_vmscan_lru_shrink_active",
                format!(
                    "nid={nid} nr_taken={nr_taken} nr_active={} nr_deactivated={nr_deactivated} nr_referenced={nr_referenced} priority={priority} flags={}",
                    nr_taken - nr_deactivated,
                    wb(file)
                ),
            ),
            Tracepoint::WritebackDirty { bdi, ino, index } if modern => {
                ("writeback_dirty_folio", format!("bdi {}: ino={ino} index={index}", Self::bdi(bdi)))
            }
            Tracepoint::WbcWritepage { bdi, nr_to_write, sync_all, kupdate, background, older_ns } => {
                // range_start/range_end: 0 and 0 for the flusher's cyclic pass, the whole file
                // (0 to LLONG_MAX) for fsync.
                let (cyclic, end) = if sync_all { (0, i64::MAX) } else { (1, 0) };
                let head = format!(
                    "bdi {}: towrt={nr_to_write} skip=0 mode={} kupd={} bgrd={} reclm=0 cyclic={cyclic}",
                    Self::bdi(bdi),
                    sync_all as u32,
                    kupdate as u32,
                    background as u32
                );
                (
                    "wbc_writepage",
                    if modern {
                        format!("{head} start=0x0 end=0x{end:x} cgroup_ino=1")
                    } else {
                        let older = older_ns.map_or(0, Self::jiffies);
                        format!("{head} more=0 older=0x{older:x} start=0x0 end=0x{end:x}")
                    },
                )
            }
            Tracepoint::Throttled { nid, usec_timeout, usec_delayed, reason, .. } if modern => (
                "mm_vmscan_throttled",
                // 6.8's TP_printk spells the field "usect_delayed".
                format!("nid={nid} usec_timeout={usec_timeout} usect_delayed={usec_delayed} reason={}", reason.name()),
            ),
            // The kernel's ids count from 1, the root's.
            Tracepoint::MemcgFlushStats { memcg, force } if modern => (
                "memcg_flush_stats",
                format!("memcg_id={} force={} needs_flush=1", memcg as u32 + 1, force as u32),
            ),
            _ => return None,
        })
        .filter(|(name, _)| f.has(name))
    }
}

impl Tracer for FtraceWriter {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let Some((name, fields)) = self.format(ev) else { return };
        if !self.events.is_empty() && !self.events.iter().any(|e| e == name) {
            return;
        }
        let at = k.trace_at;
        let (pid, comm) = match self.comms.get(at.task).and_then(|c| c.as_ref()) {
            Some((pid, comm)) => (*pid, comm.as_str()),
            None => (0, "<...>"),
        };
        let (secs, usecs) = (at.ns / 1_000_000_000, at.ns % 1_000_000_000 / 1000);
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let _ = match self.fmt {
            TraceFormat::Linux68 => {
                writeln!(line, "{comm:>16}-{pid:<7} [{:03}] ..... {secs:>5}.{usecs:06}: {name}: {fields}", at.cpu)
            }
            _ => writeln!(line, "{comm:>16}-{pid:<5} [{:03}] {secs:>5}.{usecs:06}: {name}: {fields}", at.cpu),
        };
        self.write(&line);
        self.line = line;
        self.lines += 1;
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn task_created(&mut self, task: usize, pid: u32, comm: &str) {
        if self.comms.len() <= task {
            self.comms.resize(task + 1, None);
        }
        // Threads share their process's comm; the kernel keeps 15 characters of it.
        let c: String = comm.split(':').next().unwrap_or(comm).chars().take(15).collect();
        self.comms[task] = Some((pid, c));
    }
    fn finish(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
    }
}
