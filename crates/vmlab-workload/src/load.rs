//! Loading a scenario: TOML text + `--set` overrides → checked `Scenario` with parsed programs.
//!
//! The pipeline, and why it is shaped like this:
//! 1. Parse the text into a `toml::Table` (syntax errors carry a span).
//! 2. Apply each `--set KEY=VALUE` to the table. Editing the table (not the text) makes sets
//!    work for keys the file doesn't have (`vm.swappiness`), but the table has no positions.
//! 3. Deserialise `ScenarioFile` from the edited table. Positions come from a separate index of
//!    the *original* text (`SpanTree`); every error is attributed either to a file position or
//!    to the `--set` that caused it.
//! 4. Check what can be checked statically (units, unique names, disk references) and parse
//!    each process program with spans into the file (or into the `--set` argument that
//!    replaced it).

use std::path::Path;

use crate::ast::{Expr, OpKind, Span, Stmt, TplPart};
use crate::error::{suggest, ScenarioError};
use crate::program::{string_content_offset, Parser};
use crate::scenario::{
    CgroupSetup, DiskSetup, FileSetup, FileTreeSetup, KmemSetup, MachineSetup, NetRxSetup, ProcessDef, ScenarioFile,
    Setup, SwapSetup, ZoneName,
};
use crate::units;
use crate::units::cost_from_value;

mod set;
mod spans;

pub use set::set_value;
use set::{apply_set, check_set_vars, deser_error, SetArg};
use spans::{toml_error, SpanTree};

/// What the loader checks a scenario against that belongs to the machine it will run on.
#[derive(Clone, Copy, Debug)]
pub struct Vocabulary {
    /// Entries of the machine's kernel cost table (`[machine] cost = { NAME = "240ns" }`).
    pub cost_entries: &'static [&'static str],
    /// The buddy allocator's orders are 0..max_order (`[[netrx]] order`).
    pub max_order: u32,
}

/// A loaded, checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file name as given (used in error messages).
    pub path: String,
    /// The file's text, as read: every `Span` in `processes` points into it (or past its end
    /// for programs given with `--set`: see `error_at`).
    pub text: String,
    /// The deserialised file, with the `--set`s applied.
    pub file: ScenarioFile,
    /// The machine, devices and sources, every quantity resolved and checked.
    pub setup: Setup,
    /// Processes in file order, programs parsed.
    pub processes: Vec<ProcessDef>,
    /// The `--set` arguments applied, as (KEY, VALUE) split at the first `=`.
    pub sets: Vec<(String, String)>,
}

impl Scenario {
    /// An error at a program span, for the interpreter ("no region named `x`"). Programs given
    /// with `--set` have spans past the end of `text` (set k's argument is laid out after the
    /// file and the arguments before it, one separator byte apart); this resolves both.
    pub fn error_at(&self, span: Span, message: impl Into<String>) -> ScenarioError {
        let off = span.offset as usize;
        if off <= self.text.len() {
            return ScenarioError::at_span(&self.path, &self.text, span, message);
        }
        let mut start = self.text.len() + 1;
        for (k, v) in &self.sets {
            let arg = format!("{k}={v}");
            if off < start + arg.len() + 1 {
                return ScenarioError::for_set(&arg, off - start, span.len as usize, message);
            }
            start += arg.len() + 1;
        }
        ScenarioError::new(&self.path, message)
    }
}

/// Which part of a `key = value` an error points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Key,
    Value,
}

impl Scenario {
    /// Put every process and every top-level group under a new v1 group `name` limited to
    /// `memory` bytes (and `memory + swap` of memory and swap), as `vmlab real` runs a workload
    /// in its cgroup and `vmlab run --host` simulates it.
    pub fn wrap_in_limit(&mut self, name: &str, memory: u64, swap: u64) {
        let span = self.setup.cgroups.first().map(|c| c.span).unwrap_or_default();
        for c in &mut self.setup.cgroups {
            c.parent = Some(c.parent.map_or(0, |p| p + 1));
        }
        self.setup.cgroups.insert(
            0,
            CgroupSetup {
                name: name.into(),
                parent: None,
                v1: true,
                max: Some(memory),
                high: None,
                low: None,
                min: None,
                swap_max: None,
                memsw_max: Some(memory.saturating_add(swap)),
                span,
            },
        );
        for p in &mut self.processes {
            p.cgroup = Some(p.cgroup.map_or(0, |c| c + 1));
        }
    }

    /// Where the value at `path` (e.g. ["vm", "swappiness"]) was written: in the last `--set`
    /// that wrote it (a span past the end of `text`, laid out as `error_at` reads it) or in the
    /// file. `None` when neither has it (a default).
    pub fn span_of(&self, path: &[&str], part: Part) -> Option<Span> {
        let mut start = self.text.len() + 1;
        let mut found = None;
        for (k, v) in &self.sets {
            let segs: Vec<&str> = k.split('.').map(str::trim).collect();
            // `--set vm.swappiness=1` writes the path; `--set vm={ swappiness = 1 }` a table holding it.
            if segs.len() <= path.len() && segs.iter().zip(path).all(|(a, b)| a == b) {
                let (at, len) = if part == Part::Key && segs.len() == path.len() {
                    let last = k.rsplit('.').next().unwrap_or(k);
                    let lead = last.len() - last.trim_start().len();
                    (k.len() - last.len() + lead, last.trim().len())
                } else {
                    let lead = v.len() - v.trim_start().len();
                    (k.len() + 1 + lead, v.trim().len())
                };
                found = Some(Span { offset: (start + at) as u32, len: len.max(1) as u32, line: 0, col: 0 });
            }
            start += k.len() + 1 + v.len() + 1;
        }
        if found.is_some() {
            return found;
        }
        let tree = SpanTree::build(&self.text);
        let r = match part {
            Part::Key => tree.key_range(path)?,
            Part::Value => tree.get(path)?.span.clone(),
        };
        let (line, col) = super::error::line_col(&self.text, r.start);
        Some(Span { offset: r.start as u32, len: r.len() as u32, line, col })
    }
}

/// Load a scenario file and apply `--set KEY=VALUE` overrides.
pub fn load_scenario(path: &Path, sets: &[String], vocab: &Vocabulary) -> Result<Scenario, ScenarioError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ScenarioError::new(&name, format!("cannot read the scenario: {e}")))?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // The lossy text is the file up to the first bad byte, which becomes U+FFFD there.
            let at = e.utf8_error().valid_up_to();
            let shown = String::from_utf8_lossy(e.as_bytes());
            return Err(ScenarioError::at(
                &name,
                &shown,
                at,
                char::REPLACEMENT_CHARACTER.len_utf8(),
                "the scenario is not valid UTF-8",
            )
            .with_label("not UTF-8"));
        }
    };
    load_scenario_str(&name, &text, sets, vocab)
}

/// Load a scenario from text; `name` is used in error messages.
pub fn load_scenario_str(
    name: &str,
    text: &str,
    sets: &[String],
    vocab: &Vocabulary,
) -> Result<Scenario, ScenarioError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(name, text, &e, &SpanTree::default()))?;
    if let Some(r) = super::toml_scan::first_datetime(text) {
        return Err(ScenarioError::at(name, text, r.start, r.len(), "a TOML date or time is not a scenario value")
            .with_label("a datetime")
            .with_help("sizes, durations and names are written as strings or integers: \"1GiB\", \"10s\""));
    }
    let tree = SpanTree::build(text);
    let mut sets: Vec<SetArg> = sets.iter().map(|s| SetArg::parse(s)).collect::<Result<_, _>>()?;
    let mut edited = table.clone();
    for s in sets.iter_mut() {
        s.resolved = apply_set(&mut edited, s)?;
    }
    check_set_vars(&table, &sets)?;
    let file: ScenarioFile = match edited.try_into() {
        Ok(f) => f,
        Err(e) => return Err(deser_error(name, text, &tree, &table, &sets, &e)),
    };
    let ctx = Ctx { name, text, tree: &tree, sets: &sets, vocab };
    let (setup, processes) = check(&ctx, &file)?;
    Ok(Scenario {
        path: name.to_string(),
        text: text.to_string(),
        file,
        setup,
        processes,
        sets: sets.iter().map(|s| (s.arg[..s.eq].to_string(), s.arg[s.eq + 1..].to_string())).collect(),
    })
}

// ---- static checks ----------------------------------------------------------------------------

// What a scenario may ask the simulator to hold, checked here, before a run, so that a typo in
// a size is a positioned error instead of an allocation that takes the host down. The reasons
// are in docs/SCENARIOS.md, "Limits".

/// The finest timeline interval (a scenario's finer `interval` is raised to it).
pub const MIN_INTERVAL_NS: u64 = 1_000_000;
/// The coarsest timeline interval: a year.
pub const MAX_INTERVAL_NS: u64 = 365 * 24 * 3600 * 1_000_000_000;
/// How long a run without `duration` may last, simulated.
pub const DEFAULT_DURATION_NS: u64 = 24 * 3600 * 1_000_000_000;
/// Timeline samples a run may take: 100,000 took 130 MB of memory with the text report and
/// 49 MB of JSON, so this is under a gigabyte.
pub const MAX_TIMELINE_SAMPLES: u64 = 500_000;
/// A swap area, and all `[[file]]`s and `[[filetree]]`s together: the largest machine's memory.
pub const MAX_STORAGE_BYTES: u64 = 1 << 40;
/// Files made before the run (`[[file]]` copies and `[[filetree]]` files).
pub const MAX_FILES: u64 = 1_000_000;
/// The smallest zone given in `machine.zones`, and the smallest machine they may make.
pub const MIN_ZONE_BYTES: u64 = 1 << 20;
pub const MIN_NODE_BYTES: u64 = 16 << 20;
/// The highest `[[netrx]] rate`: above 100 GbE's minimum-frame line rate, below what would make a
/// second of simulation take minutes (each packet is an allocation attempt).
const NETRX_MAX_RATE: u64 = 200_000_000;

/// The number of timeline samples a run of at most `limit_ns` takes every `interval_ns`, or an
/// error saying which bound was crossed (`what` names the interval: `interval`, `--interval`).
pub fn check_timeline(what: &str, interval_ns: u64, limit_ns: u64) -> Result<u64, String> {
    if interval_ns > MAX_INTERVAL_NS {
        return Err(format!("{what} is longer than a year"));
    }
    let samples = limit_ns / interval_ns.max(MIN_INTERVAL_NS);
    if samples > MAX_TIMELINE_SAMPLES {
        return Err(format!(
            "{what} {:.3} s over a run of up to {:.0} s is {samples} timeline samples; the limit is {MAX_TIMELINE_SAMPLES}: \
             set a shorter `duration` or a longer interval",
            interval_ns.max(MIN_INTERVAL_NS) as f64 / 1e9,
            limit_ns as f64 / 1e9,
        ));
    }
    Ok(samples)
}

/// The timeline's size (interval, duration) and the storage and zones the machine is given.
fn check_limits(ctx: &Ctx<'_>, f: &ScenarioFile) -> Result<(), ScenarioError> {
    let interval = f.interval.as_deref().map(units::parse_duration).transpose().ok().flatten();
    let duration = f.duration.as_deref().map(units::parse_duration).transpose().ok().flatten();
    let at: &[&str] = if f.interval.is_some() { &["interval"] } else { &["duration"] };
    check_timeline("interval", interval.unwrap_or(1_000_000_000), duration.unwrap_or(DEFAULT_DURATION_NS))
        .map_err(|e| ctx.err(at, e))?;

    let tib = |b: u64| b as f64 / (1u64 << 40) as f64;
    if let Some(s) = &f.swap {
        let bytes = ctx.unit(&["swap", "size"], units::parse_size(&s.size))?;
        if bytes > MAX_STORAGE_BYTES {
            return Err(ctx.err(&["swap", "size"], format!("swap of {:.1} TiB; the limit is 1 TiB", tib(bytes))));
        }
    }
    let (mut bytes, mut files) = (0u64, 0u64);
    let too_much = |bytes: u64, files: u64| -> Option<String> {
        if bytes > MAX_STORAGE_BYTES {
            Some(format!("the scenario's files come to {:.1} TiB; the limit is 1 TiB in all", tib(bytes)))
        } else if files > MAX_FILES {
            Some(format!("the scenario's files number {files}; the limit is {MAX_FILES} in all"))
        } else {
            None
        }
    };
    for (i, file) in f.files.iter().enumerate() {
        let i = i.to_string();
        let size = ctx.unit(&["file", &i, "size"], units::size_from_value(&file.size))?;
        bytes = bytes.saturating_add(size.saturating_mul(file.count as u64));
        files += file.count as u64;
        if let Some(m) = too_much(bytes, files) {
            let key = if size > MAX_STORAGE_BYTES || files <= MAX_FILES { "size" } else { "count" };
            return Err(ctx.err(&["file", &i, key], m));
        }
    }
    for (i, t) in f.filetrees.iter().enumerate() {
        let i = i.to_string();
        let total = ctx.unit(&["filetree", &i, "total"], units::parse_size(&t.total))?;
        let mean = ctx.unit(&["filetree", &i, "mean"], units::parse_size(&t.mean))?;
        bytes = bytes.saturating_add(total);
        // As many files as dist::file_tree_sizes makes.
        files += if total == 0 { 0 } else { (total / mean.max(1)).clamp(1, total) };
        if let Some(m) = too_much(bytes, files) {
            let key = if files > MAX_FILES { "mean" } else { "total" };
            return Err(ctx.err(&["filetree", &i, key], m));
        }
    }
    if let Some(zones) = &f.machine.zones {
        let mut sum = 0u64;
        for (z, v) in zones {
            let b = ctx.unit(&["machine", "zones", z], units::size_from_value(v))?;
            if b < MIN_ZONE_BYTES {
                return Err(
                    ctx.err(&["machine", "zones", z], format!("zone {z} of {b} bytes; a zone is at least 1 MiB"))
                );
            }
            sum = sum.saturating_add(b);
        }
        if sum < MIN_NODE_BYTES {
            return Err(ctx.err(
                &["machine", "zones"],
                format!("the zones come to {sum} bytes; at least 16 MiB per node is needed"),
            ));
        }
    }
    Ok(())
}

struct Ctx<'a> {
    vocab: &'a Vocabulary,
    name: &'a str,
    text: &'a str,
    tree: &'a SpanTree,
    sets: &'a [SetArg],
}

impl Ctx<'_> {
    /// The set that last wrote `path` (or a table containing it).
    fn set_for(&self, path: &[&str]) -> Option<&SetArg> {
        self.sets
            .iter()
            .rev()
            .find(|s| s.resolved.len() <= path.len() && s.resolved.iter().zip(path).all(|(a, b)| a == b))
    }

    /// An error about the value at `path` (e.g. ["machine", "memory"]).
    fn err(&self, path: &[&str], msg: impl Into<String>) -> ScenarioError {
        let msg = msg.into();
        if let Some(s) = self.set_for(path) {
            return s.err_value(msg);
        }
        match self.tree.get(path) {
            Some(t) if !path.is_empty() => ScenarioError::at(self.name, self.text, t.span.start, t.span.len(), msg),
            _ => ScenarioError::new(self.name, format!("{msg} (at `{}`)", path.join("."))),
        }
    }

    /// `Ok(())` or an error at `path` wrapping a units error.
    fn unit<T>(&self, path: &[&str], r: Result<T, String>) -> Result<T, ScenarioError> {
        r.map_err(|e| self.err(path, e))
    }

    fn span_of(&self, path: &[&str]) -> Span {
        match self.tree.get(path) {
            Some(t) if self.set_for(path).is_none() => {
                let (line, col) = crate::error::line_col(self.text, t.span.start);
                Span { offset: t.span.start as u32, len: t.span.len() as u32, line, col }
            }
            _ => Span::default(),
        }
    }
}

/// The scenario's quantities resolved, each checked where it is written.
fn resolve(ctx: &Ctx<'_>, f: &ScenarioFile) -> Result<(Setup, Vec<String>), ScenarioError> {
    let mut times = [None; 3];
    for (i, (key, v)) in
        [("duration", &f.duration), ("linger", &f.linger), ("interval", &f.interval)].iter().enumerate()
    {
        if let Some(v) = v {
            times[i] = Some(ctx.unit(&[key], units::parse_duration(v))?);
        }
    }
    let m = &f.machine;
    let memory_bytes = ctx.unit(&["machine", "memory"], units::parse_size(&m.memory))?;
    let reserved_bytes = match &m.reserved {
        Some(r) => ctx.unit(&["machine", "reserved"], units::parse_size(r))?,
        None => 0,
    };
    let reserved_low_bytes = match &m.reserved_low {
        Some(r) => ctx.unit(&["machine", "reserved_low"], units::parse_size(r))?,
        None => 0,
    };
    let zones = match &m.zones {
        Some(zones) => {
            let mut out = Vec::new();
            for (z, v) in zones {
                let bytes = ctx.unit(&["machine", "zones", z], units::size_from_value(v))?;
                let name = match z.as_str() {
                    "DMA" => ZoneName::Dma,
                    "DMA32" => ZoneName::Dma32,
                    "Normal" => ZoneName::Normal,
                    "HighMem" => ZoneName::HighMem,
                    other => {
                        return Err(ctx.err(
                            &["machine", "zones", z],
                            format!("unknown zone `{other}`; expected DMA, DMA32, Normal or HighMem"),
                        ))
                    }
                };
                out.push((name, bytes));
            }
            Some(out)
        }
        None => None,
    };
    let mut cost = Vec::new();
    if let Some(table) = &m.cost {
        for (name, v) in table {
            let names = ctx.vocab.cost_entries;
            if !names.contains(&name.as_str()) {
                let hint =
                    suggest(name, names.iter().copied()).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                return Err(ctx
                    .err(&["machine", "cost", name], format!("unknown cost entry `{name}`{hint}"))
                    .with_help(format!("cost entries: {}", names.join(", "))));
            }
            cost.push((name.clone(), ctx.unit(&["machine", "cost", name], cost_from_value(v))?));
        }
    }
    if !["x86_64", "i386"].contains(&m.arch.as_str()) {
        let hint = suggest(&m.arch, ["x86_64", "i386"]).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        return Err(ctx
            .err(&["machine", "arch"], format!("unknown arch `{}`{hint}", m.arch))
            .with_help("arch is `x86_64` or `i386`"));
    }
    for (key, v) in [("cpus", m.cpus), ("nodes", m.nodes), ("cpu_mhz", m.cpu_mhz)] {
        if v == 0 {
            return Err(ctx.err(&["machine", key], format!("`{key}` must be at least 1")));
        }
    }
    if m.cpus > 4096 {
        return Err(ctx.err(&["machine", "cpus"], "`cpus` must be between 1 and 4096"));
    }
    // x86's NODES_SHIFT is at most 10 (arch/x86/Kconfig): no kernel vmlab models boots more nodes,
    // and per-node state makes a run's cost grow faster than the node count.
    if m.nodes > 1024 {
        return Err(ctx
            .err(&["machine", "nodes"], "`nodes` must be between 1 and 1024")
            .with_help("1024 is x86-64's MAX_NUMNODES (CONFIG_NODES_SHIFT at most 10)"));
    }

    check_limits(ctx, f)?;

    let mut disks = Vec::new();
    let mut disk_names: Vec<&str> = Vec::new();
    for (i, d) in f.disks.iter().enumerate() {
        let i = i.to_string();
        if disk_names.contains(&d.name.as_str()) {
            return Err(ctx.err(&["disk", &i, "name"], format!("duplicate disk name `{}`", d.name)));
        }
        disk_names.push(&d.name);
        const MODELS: &[&str] = &["hdd", "ssd", "nvme", "raid10", "san"];
        if !MODELS.contains(&d.model.as_str()) {
            let hint =
                suggest(&d.model, MODELS.iter().copied()).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
            return Err(ctx
                .err(&["disk", &i, "model"], format!("unknown disk model `{}`{hint}", d.model))
                .with_help(format!("models: {}", MODELS.join(", "))));
        }
        let bandwidth_bps = match &d.bandwidth {
            Some(b) => Some(ctx.unit(&["disk", &i, "bandwidth"], units::parse_bandwidth(b))?),
            None => None,
        };
        let device_bandwidth_bps = match &d.device_bandwidth {
            Some(b) => Some(ctx.unit(&["disk", &i, "device_bandwidth"], units::parse_bandwidth(b))?),
            None => None,
        };
        let write_bandwidth_bps = match &d.write_bandwidth {
            Some(b) => Some(ctx.unit(&["disk", &i, "write_bandwidth"], units::parse_bandwidth(b))?),
            None => None,
        };
        if write_bandwidth_bps == Some(0) {
            return Err(ctx.err(&["disk", &i, "write_bandwidth"], "write_bandwidth must be > 0"));
        }
        let device_write_bandwidth_bps = match &d.device_write_bandwidth {
            Some(b) => Some(ctx.unit(&["disk", &i, "device_write_bandwidth"], units::parse_bandwidth(b))?),
            None => None,
        };
        let mut times = [None; 3];
        let keyed =
            [("seek", &d.seek), ("latency", &d.latency), ("write_completion_latency", &d.write_completion_latency)];
        for (j, (key, v)) in keyed.iter().enumerate() {
            if let Some(v) = v {
                times[j] = Some(ctx.unit(&["disk", &i, key], units::parse_duration(v))?);
            }
        }
        let chunk_bytes = match &d.chunk {
            Some(c) => Some(ctx.unit(&["disk", &i, "chunk"], units::parse_size(c))?),
            None => None,
        };
        if d.ring_descriptors.is_some_and(|n| n < 3) {
            return Err(ctx.err(
                &["disk", &i, "ring_descriptors"],
                "ring_descriptors must be at least 3: a request takes one per segment plus two",
            ));
        }
        if d.nr_requests == Some(0) {
            return Err(ctx.err(&["disk", &i, "nr_requests"], "nr_requests must be at least 1"));
        }
        let deadline = match d.scheduler.as_deref().unwrap_or("none") {
            "none" => None,
            "mq-deadline" => Some((d.writes_starved.unwrap_or(2), d.fifo_batch.unwrap_or(16))),
            other => {
                return Err(ctx.err(
                    &["disk", &i, "scheduler"],
                    format!("unknown scheduler `{other}`: vmlab models \"none\" and \"mq-deadline\""),
                ))
            }
        };
        if d.irq.as_deref().is_some_and(|n| n.is_empty() || n.chars().any(char::is_whitespace)) {
            return Err(ctx.err(&["disk", &i, "irq"], "irq must be a function name (one word)"));
        }
        disks.push(DiskSetup {
            name: d.name.clone(),
            model: d.model.clone(),
            bandwidth_bps,
            seek_ns: times[0],
            latency_ns: times[1],
            queue_depth: d.queue_depth,
            spindles: d.spindles,
            chunk_bytes,
            device_bandwidth_bps,
            write_bandwidth_bps,
            device_write_bandwidth_bps,
            write_completion_latency_ns: times[2],
            ring_descriptors: d.ring_descriptors,
            nr_requests: d.nr_requests,
            wbt_lat_usec: d.wbt_lat_usec,
            write_cache: d.write_cache,
            deadline,
            irq: d.irq.clone(),
            large_folios: d.large_folios,
            io_end_pages: d.io_end_pages.unwrap_or(0),
            loop_worker: d.loop_worker,
            driver_depth: d.driver_depth.unwrap_or(0),
            span: ctx.span_of(&["disk", &i, "name"]),
        });
    }
    let disk_index = |path: &[&str], disk: &Option<String>| -> Result<usize, ScenarioError> {
        match disk {
            None => Ok(0),
            Some(d) => disk_names.iter().position(|n| n == d).ok_or_else(|| {
                let hint = suggest(d, disk_names.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                let known = if disk_names.is_empty() {
                    "the scenario defines no [[disk]]".to_string()
                } else {
                    format!("disks: {}", disk_names.join(", "))
                };
                ctx.err(path, format!("no disk named `{d}`{hint}")).with_help(known)
            }),
        }
    };
    let swap = match &f.swap {
        Some(s) => {
            let bytes = ctx.unit(&["swap", "size"], units::parse_size(&s.size))?;
            Some(SwapSetup { bytes, disk: disk_index(&["swap", "disk"], &s.disk)? })
        }
        None => None,
    };
    let mut files = Vec::new();
    for (i, file) in f.files.iter().enumerate() {
        let i = i.to_string();
        let bytes = ctx.unit(&["file", &i, "size"], units::size_from_value(&file.size))?;
        let disk = disk_index(&["file", &i, "disk"], &file.disk)?;
        if file.count > 1 && !file.name.contains("{i}") {
            return Err(ctx
                .err(
                    &["file", &i, "name"],
                    format!(
                        "`count = {}` needs `{{i}}` in the name, or every file is called `{}`",
                        file.count, file.name
                    ),
                )
                .with_help(format!("e.g. name = \"{}{{i}}\" gives {0}0, {0}1, ...", file.name)));
        }
        files.push(FileSetup { name: file.name.clone(), count: file.count, bytes, disk });
    }
    let mut filetrees = Vec::new();
    for (i, t) in f.filetrees.iter().enumerate() {
        let i = i.to_string();
        let total_bytes = ctx.unit(&["filetree", &i, "total"], units::parse_size(&t.total))?;
        let mean_bytes = ctx.unit(&["filetree", &i, "mean"], units::parse_size(&t.mean))?;
        let disk = disk_index(&["filetree", &i, "disk"], &t.disk)?;
        filetrees.push(FileTreeSetup {
            name: t.name.clone(),
            total_bytes,
            mean_bytes,
            sigma: t.sigma.unwrap_or(1.2),
            disk,
            packed: t.packed,
        });
    }
    let mut netrx = Vec::new();
    for (i, n) in f.netrx.iter().enumerate() {
        let i = i.to_string();
        let rate = ctx.unit(&["netrx", &i, "rate"], units::rate_from_value(&n.rate))?;
        if rate > NETRX_MAX_RATE {
            return Err(ctx.err(
                &["netrx", &i, "rate"],
                format!(
                    "{rate} packets a second is beyond any NIC (100 GbE's line rate is 148,809,524 \
                     minimum-size frames a second); the most is {NETRX_MAX_RATE}/s"
                ),
            ));
        }
        let lifetime_ns = ctx.unit(&["netrx", &i, "lifetime"], units::parse_duration(&n.lifetime))?;
        let object_bytes = match &n.object {
            Some(o) => Some(ctx.unit(&["netrx", &i, "object"], units::parse_size(o))?),
            None => None,
        };
        if n.order >= ctx.vocab.max_order {
            return Err(ctx.err(
                &["netrx", &i, "order"],
                format!(
                    "order {} is too high: the buddy allocator's orders are 0..={}",
                    n.order,
                    ctx.vocab.max_order - 1
                ),
            ));
        }
        if n.node >= m.nodes {
            return Err(ctx.err(
                &["netrx", &i, "node"],
                format!("node {} does not exist: the machine has {} node(s)", n.node, m.nodes),
            ));
        }
        let exponential = match n.lifetime_dist.as_deref() {
            None | Some("fixed") => false,
            Some("exponential") => true,
            Some(o) => {
                return Err(ctx.err(
                    &["netrx", &i, "lifetime_dist"],
                    format!("unknown lifetime distribution `{o}`; expected \"fixed\" or \"exponential\""),
                ))
            }
        };
        if let Some(bytes) = object_bytes {
            let slab = 4096u64 << n.order;
            if bytes < 8 || bytes > slab {
                return Err(ctx.err(
                    &["netrx", &i, "object"],
                    format!(
                        "an object of {bytes} bytes does not fit: 8 bytes to the slab size ({slab} bytes at order {})",
                        n.order
                    ),
                ));
            }
        }
        let on_off = match (&n.on, &n.off) {
            (Some(on), Some(off)) => {
                let on_ns = ctx.unit(&["netrx", &i, "on"], units::parse_duration(on))?;
                let off_ns = ctx.unit(&["netrx", &i, "off"], units::parse_duration(off))?;
                if on_ns == 0 {
                    return Err(ctx.err(&["netrx", &i, "on"], "`on` is 0: a burst must last some time"));
                }
                Some((on_ns, off_ns))
            }
            (None, None) => None,
            (Some(_), None) => return Err(ctx.err(&["netrx", &i, "on"], "`on` and `off` go together (bursts repeat)")),
            (None, Some(_)) => return Err(ctx.err(&["netrx", &i, "off"], "`on` and `off` go together (bursts repeat)")),
        };
        let drain = match &n.drain {
            Some(d) => Some(ctx.unit(&["netrx", &i, "drain"], units::rate_from_value(d))?),
            None => None,
        };
        if let Some(mtu) = n.mtu {
            if !(68..=65535).contains(&mtu) {
                return Err(
                    ctx.err(&["netrx", &i, "mtu"], format!("an MTU of {mtu} bytes; Ethernet MTUs are 68 to 65535"))
                );
            }
            if n.object.is_some() {
                return Err(ctx.err(
                    &["netrx", &i, "object"],
                    "`object` and `mtu` exclude each other: with `mtu` the skb's data size follows from it",
                ));
            }
        }
        let slow = match (n.slow_share, &n.slow_lifetime) {
            (Some(share), Some(l)) => {
                if !(0.0..=1.0).contains(&share) {
                    return Err(
                        ctx.err(&["netrx", &i, "slow_share"], format!("slow_share {share} is not a share (0 to 1)"))
                    );
                }
                let ns = ctx.unit(&["netrx", &i, "slow_lifetime"], units::parse_duration(l))?;
                Some(((share * 1e6).round() as u32, ns))
            }
            (None, None) => None,
            (Some(_), None) => {
                return Err(ctx.err(
                    &["netrx", &i, "slow_share"],
                    "`slow_share` needs `slow_lifetime` (how long slow readers hold a packet)",
                ))
            }
            (None, Some(_)) => {
                return Err(ctx.err(
                    &["netrx", &i, "slow_lifetime"],
                    "`slow_lifetime` needs `slow_share` (which packets are slow)",
                ))
            }
        };
        netrx.push(NetRxSetup {
            slow,
            mtu: n.mtu,
            rate,
            order: n.order,
            lifetime_ns,
            exponential,
            node: n.node,
            object_bytes,
            on_off,
            drain,
        });
    }
    let mut kmem = Vec::new();
    for (i, km) in f.kmem.iter().enumerate() {
        let i = i.to_string();
        let bytes = ctx.unit(&["kmem", &i, "size"], units::parse_size(&km.size))?;
        let lifetime_ns = ctx.unit(&["kmem", &i, "lifetime"], units::parse_duration(&km.lifetime))?;
        if lifetime_ns == 0 {
            return Err(ctx.err(&["kmem", &i, "lifetime"], "a lifetime of 0: the allocations must live some time"));
        }
        let object_bytes = match &km.object {
            Some(o) => {
                let b = ctx.unit(&["kmem", &i, "object"], units::parse_size(o))?;
                if !(8..=8192).contains(&b) {
                    return Err(ctx.err(&["kmem", &i, "object"], format!("{b} bytes: kmalloc caches hold 8 to 8192")));
                }
                Some(b)
            }
            None => None,
        };
        let each = object_bytes.map_or(4096, |b| b.next_power_of_two());
        let population = bytes / each;
        if population > 1 << 24 {
            return Err(ctx.err(&["kmem", &i, "size"], format!("{population} allocations: at most 16M are modelled")));
        }
        kmem.push(KmemSetup { population, lifetime_ns, object_bytes });
    }
    let fs = match &f.fs {
        Some(fs) => {
            for (key, v) in [("inode_size", fs.inode_size), ("dentry_size", fs.dentry_size)] {
                if !(8..=32768).contains(&v) {
                    return Err(ctx.err(&["fs", key], format!("{key} is {v} bytes; a slab object is 8 to 32768 bytes")));
                }
            }
            Some((fs.inode_size, fs.dentry_size))
        }
        None => None,
    };
    let fork = match &f.fork {
        Some(fk) => {
            let bytes = ctx.unit(&["fork", "thread_size"], units::parse_size(&fk.thread_size))?;
            if bytes < 4096 || !bytes.is_power_of_two() || bytes.trailing_zeros() - 12 >= ctx.vocab.max_order {
                return Err(ctx.err(
                    &["fork", "thread_size"],
                    format!("a kernel stack of {bytes} bytes; THREAD_SIZE is a power-of-two number of pages"),
                ));
            }
            if !(8..=32768).contains(&fk.task_struct) {
                return Err(ctx.err(
                    &["fork", "task_struct"],
                    format!("task_struct is {} bytes; a slab object is 8 to 32768 bytes", fk.task_struct),
                ));
            }
            Some((bytes.trailing_zeros() - 12, fk.task_struct))
        }
        None => None,
    };
    let slub = match &f.slub {
        Some(sl) => {
            let top = ctx.vocab.max_order - 1;
            for (key, v) in [("max_order", sl.max_order), ("min_order", sl.min_order)] {
                if v > top {
                    return Err(ctx.err(
                        &["slub", key],
                        format!("{key} {v} is too high: the buddy allocator's orders are 0..={top}"),
                    ));
                }
            }
            if sl.min_order > sl.max_order {
                return Err(ctx.err(
                    &["slub", "min_order"],
                    format!("min_order {} is above max_order {}", sl.min_order, sl.max_order),
                ));
            }
            if sl.min_objects > 65535 {
                return Err(ctx.err(
                    &["slub", "min_objects"],
                    format!("min_objects {}: a slab holds at most 65535 objects", sl.min_objects),
                ));
            }
            Some((sl.max_order, sl.min_objects, sl.min_order))
        }
        None => None,
    };
    let machine = MachineSetup {
        memory_bytes,
        cpus: m.cpus,
        nodes: m.nodes,
        arch: m.arch.clone(),
        cpu_mhz: m.cpu_mhz,
        reserved_bytes,
        reserved_low_bytes,
        inodes_in_use: m.inodes_in_use.unwrap_or(0),
        foreign_dirty_bytes: match &m.foreign_dirty {
            Some(v) => {
                let bytes = ctx.unit(&["machine", "foreign_dirty"], units::parse_size(v))?;
                // Page-cache pages of the machine: they have to fit in its memory.
                if bytes > memory_bytes {
                    return Err(ctx.err(
                        &["machine", "foreign_dirty"],
                        format!("{bytes} bytes of dirty page cache do not fit in the machine's {memory_bytes}"),
                    ));
                }
                bytes
            }
            None => 0,
        },
        foreign_disk: disk_index(&["machine", "foreign_disk"], &m.foreign_disk)?,
        page_reporting_order: match m.page_reporting_order {
            // Reporting walks the free lists from this order to the largest (orders 0..=10).
            Some(o) if o > 10 => {
                return Err(ctx.err(
                    &["machine", "page_reporting_order"],
                    format!("page_reporting_order {o} is above the buddy allocator's largest order, 10"),
                ))
            }
            o => o,
        },
        reported_at_start: reported_at_start(ctx, m, memory_bytes)?,
        zones,
        cost,
    };
    let cgroups = resolve_cgroups(ctx, f)?;
    let setup = Setup {
        cgroups,
        duration_ns: times[0],
        linger_ns: times[1],
        interval_ns: times[2],
        machine,
        disks,
        swap,
        files,
        filetrees,
        netrx,
        kmem,
        fs,
        fork,
        slub,
    };
    Ok((setup, disk_names.iter().map(|s| s.to_string()).collect()))
}

/// `machine.reported_at_start` with its unreported small and large bytes and its reported
/// bytes (None: all the rest), checked: the sizes need it, it needs a reporting machine, and
/// they must fit.
fn reported_at_start(
    ctx: &Ctx,
    m: &crate::scenario::MachineSpec,
    memory_bytes: u64,
) -> Result<Option<(u64, u64, Option<u64>)>, ScenarioError> {
    let keys = [
        ("unreported_small", &m.unreported_small),
        ("unreported_large", &m.unreported_large),
        ("reported_free", &m.reported_free),
    ];
    let mut given = keys.iter().filter(|(_, v)| v.is_some()).map(|&(key, _)| key);
    if m.reported_at_start != Some(true) {
        return match given.next() {
            Some(key) => Err(ctx.err(&["machine", key], format!("{key} needs machine.reported_at_start = true"))),
            None => Ok(None),
        };
    }
    if m.page_reporting_order.is_none() {
        return Err(ctx.err(
            &["machine", "reported_at_start"],
            "reported_at_start needs machine.page_reporting_order (a machine that reports free pages)",
        ));
    }
    let mut bytes = [0u64; 3];
    for (b, (key, v)) in bytes.iter_mut().zip(&keys) {
        if let Some(v) = v {
            *b = ctx.unit(&["machine", key], units::parse_size(v))?;
        }
    }
    let total: u64 = bytes.iter().sum();
    if let Some(key) = given.next_back().filter(|_| total > memory_bytes) {
        return Err(ctx.err(
            &["machine", key],
            format!("{total} bytes of free memory do not fit in the machine's {memory_bytes}"),
        ));
    }
    Ok(Some((bytes[0], bytes[1], m.reported_free.is_some().then_some(bytes[2]))))
}

/// `[[cgroup]]`s: unique names, parents defined earlier, sizes with units or "max", and one
/// interface (v1 or v2) per group.
fn resolve_cgroups(ctx: &Ctx<'_>, f: &ScenarioFile) -> Result<Vec<CgroupSetup>, ScenarioError> {
    let mut out: Vec<CgroupSetup> = Vec::new();
    for (i, c) in f.cgroups.iter().enumerate() {
        let i = i.to_string();
        if c.name.is_empty() || c.name.contains('/') {
            return Err(ctx.err(&["cgroup", &i, "name"], format!("`{}` is no cgroup name: non-empty, no `/`", c.name)));
        }
        if out.iter().any(|o| o.name == c.name) {
            return Err(ctx.err(&["cgroup", &i, "name"], format!("duplicate cgroup name `{}`", c.name)));
        }
        let parent = match &c.parent {
            None => None,
            Some(p) => Some(out.iter().position(|o| &o.name == p).ok_or_else(|| {
                ctx.err(&["cgroup", &i, "parent"], format!("no cgroup named `{p}` before this one"))
                    .with_help("a parent is declared before its children")
            })?),
        };
        let size = |path: &[&str], v: &Option<String>| -> Result<Option<u64>, ScenarioError> {
            match v.as_deref() {
                None | Some("max") => Ok(None),
                Some(s) => ctx.unit(path, units::parse_size(s)).map(Some),
            }
        };
        let mem = c.memory.as_ref();
        let v1 = c.limit_in_bytes.is_some() || c.memsw.is_some();
        if v1 && mem.is_some() {
            return Err(ctx.err(
                &["cgroup", &i, "memory"],
                format!("cgroup `{}` mixes the v1 files (limit_in_bytes, memsw.*) with the v2 ones (memory.*)", c.name),
            ));
        }
        out.push(CgroupSetup {
            name: c.name.clone(),
            parent,
            v1,
            max: match mem {
                Some(m) => size(&["cgroup", &i, "memory", "max"], &m.max)?,
                None => size(&["cgroup", &i, "limit_in_bytes"], &c.limit_in_bytes)?,
            },
            high: size(&["cgroup", &i, "memory", "high"], &mem.and_then(|m| m.high.clone()))?,
            low: size(&["cgroup", &i, "memory", "low"], &mem.and_then(|m| m.low.clone()))?,
            min: size(&["cgroup", &i, "memory", "min"], &mem.and_then(|m| m.min.clone()))?,
            swap_max: size(
                &["cgroup", &i, "memory", "swap", "max"],
                &mem.and_then(|m| m.swap.as_ref()).and_then(|s| s.max.clone()),
            )?,
            memsw_max: size(
                &["cgroup", &i, "memsw", "limit_in_bytes"],
                &c.memsw.as_ref().and_then(|m| m.limit_in_bytes.clone()),
            )?,
            span: ctx.span_of(&["cgroup", &i, "name"]),
        });
    }
    Ok(out)
}

fn check(ctx: &Ctx<'_>, f: &ScenarioFile) -> Result<(Setup, Vec<ProcessDef>), ScenarioError> {
    let (setup, disk_names) = resolve(ctx, f)?;
    let disk_names: Vec<&str> = disk_names.iter().map(String::as_str).collect();
    let vars = check_vars(ctx, f)?;
    let mut procs: Vec<ProcessDef> = Vec::new();
    for (i, p) in f.processes.iter().enumerate() {
        let i = i.to_string();
        if let Some(first) = procs.iter().find(|q| q.name == p.name) {
            let at = if first.span.line > 0 {
                format!(" (first defined on line {})", first.span.line)
            } else {
                String::new()
            };
            return Err(ctx.err(&["process", &i, "name"], format!("duplicate process name `{}`{at}", p.name)));
        }
        let start_ns = match &p.start {
            Some(s) => ctx.unit(&["process", &i, "start"], units::parse_duration(s))?,
            None => 0,
        };
        let mut program = parse_process_program(ctx, &i, &p.program, &vars)?;
        // `[vars]` become `let`s ahead of the program's own text.
        program.splice(
            0..0,
            vars.iter().map(|(name, v, span)| Stmt::Let {
                name: name.clone(),
                value: Expr::Int(*v, *span),
                span: *span,
            }),
        );
        check_program_disks(&program, &disk_names).map_err(|(span, d)| {
            ScenarioError::at_span(ctx.name, ctx.text, span, format!("no disk named `{d}`"))
                .with_help(format!("disks: {}", disk_names.join(", ")))
        })?;
        let memlock_limit = match &p.memlock {
            Some(m) => ctx.unit(&["process", &i, "memlock"], units::parse_size(m))? / 4096,
            None => u64::MAX,
        };
        let cgroup = match &p.cgroup {
            None => None,
            Some(c) => Some(setup.cgroups.iter().position(|g| &g.name == c).ok_or_else(|| {
                let names: Vec<&str> = setup.cgroups.iter().map(|g| g.name.as_str()).collect();
                let e = ctx.err(&["process", &i, "cgroup"], format!("no cgroup named `{c}`"));
                if names.is_empty() {
                    e.with_help("declare it with [[cgroup]] name = ...")
                } else {
                    e.with_help(format!("cgroups: {}", names.join(", ")))
                }
            })?),
        };
        procs.push(ProcessDef {
            name: p.name.clone(),
            count: p.count,
            start_ns,
            cpu: p.cpu,
            memlock_limit,
            cgroup,
            program,
            span: ctx.span_of(&["process", &i, "name"]),
        });
    }
    Ok((setup, procs))
}

/// `[vars]`: names that can be variables, values that are integers (a size or duration with its
/// unit, or true/false, become one).
fn check_vars(ctx: &Ctx<'_>, f: &ScenarioFile) -> Result<Vec<(String, i64, Span)>, ScenarioError> {
    let mut out = Vec::new();
    for (name, v) in &f.vars {
        let path = ["vars", name.as_str()];
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident || ["errno", "tid", "nr_cpus", "nr_nodes"].contains(&name.as_str()) {
            return Err(ctx.err(
                &path,
                format!("`{name}` cannot be a variable: use letters, digits and `_`, not a built-in (`errno`, `tid`, `nr_cpus`, `nr_nodes`)"),
            ));
        }
        let value = match v {
            toml::Value::Integer(i) => *i,
            toml::Value::Boolean(b) => i64::from(*b),
            toml::Value::String(s) => {
                let (q, _) = ctx.unit(&path, units::parse_quantity(s))?;
                i64::try_from(q).map_err(|_| ctx.err(&path, format!("`{s}` is too large")))?
            }
            other => {
                return Err(ctx.err(
                    &path,
                    format!("a variable is an integer, a quantity like \"4KiB\" or a boolean, found {other}"),
                ))
            }
        };
        out.push((name.clone(), value, ctx.span_of(&path)));
    }
    Ok(out)
}

/// Parse process `i`'s program, with spans into the file, or into the `--set` that gave it.
fn parse_process_program(
    ctx: &Ctx<'_>,
    i: &str,
    program: &str,
    vars: &[(String, i64, Span)],
) -> Result<Vec<Stmt>, ScenarioError> {
    let names = || vars.iter().map(|(n, _, _)| n.as_str());
    let path = ["process", i, "program"];
    if let Some(s) = ctx.set_for(&path) {
        let (base, _) = if matches!(s.value, toml::Value::String(_)) && s.arg[s.value_at..].starts_with(['\'', '"']) {
            string_content_offset(&s.arg, s.value_at)
        } else {
            (s.value_at, true)
        };
        // Spans go past the end of the file, into a virtual layout `Scenario::error_at` undoes.
        let mut shift = ctx.text.len() + 1;
        for prev in ctx.sets.iter().take_while(|p| !std::ptr::eq(*p, s)) {
            shift += prev.arg.len() + 1;
        }
        return Parser::new(program, base, &s.arg)
            .with_defined(names())
            .with_shift(shift)
            .parse()
            .map_err(|e| e.into_set(&s.arg));
    }
    let Some(node) = ctx.tree.get(&path) else {
        return Parser::new(program, 0, program).with_defined(names()).parse().map_err(|e| e.in_file(ctx.name));
    };
    let (base, exact) = string_content_offset(ctx.text, node.span.start);
    // For a literal string the file's own bytes *are* the program (TOML may have turned CRLF
    // into LF in `program`, which would shift every later span), so parse those bytes.
    // Basic strings keep the decoded text: their spans are approximate (see the docs).
    let delim = if ctx.text.get(node.span.start..).is_some_and(|t| t.starts_with("'''")) { 3 } else { 1 };
    let raw = ctx.text.get(base..node.span.end.saturating_sub(delim)).filter(|_| exact);
    Parser::new(raw.unwrap_or(program), base, ctx.text).with_defined(names()).parse().map_err(|e| e.in_file(ctx.name))
}

/// The first `create ... disk=NAME` (with a literal name) naming a disk that doesn't exist.
fn check_program_disks(stmts: &[Stmt], disks: &[&str]) -> Result<(), (Span, String)> {
    for s in stmts {
        match s {
            Stmt::For { body, .. } | Stmt::Repeat { body, .. } => check_program_disks(body, disks)?,
            Stmt::If { then, els, .. } => {
                check_program_disks(then, disks)?;
                check_program_disks(els, disks)?;
            }
            Stmt::Op(op) => match &op.kind {
                OpKind::Create { disk: Some(t), .. } => {
                    if let [TplPart::Lit(d)] = &t.parts[..] {
                        if !disks.contains(&d.as_str()) {
                            return Err((t.span, d.clone()));
                        }
                    }
                }
                OpKind::Fork { body } | OpKind::Threads { body, .. } | OpKind::ForeachQueue { body, .. } => {
                    check_program_disks(body, disks)?
                }
                _ => {}
            },
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"name = "t"
seed = 3

[machine]
memory = "2GiB"
cpus = 2

[[disk]]
name = "sda"
bandwidth = "24MB/s"

[[file]]
name = "chunk{i}"
count = 4
size = "1MiB"

[[process]]
name = "loader"
program = '''
let n = 0
mmap a anon 4K
'''

[[process]]
name = "other"
program = "wait"
"#;

    fn load(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        const VOCAB: Vocabulary = Vocabulary { cost_entries: &["lru_scan", "syscall"], max_order: 11 };
        load_scenario_str("t.toml", text, &sets, &VOCAB)
    }

    fn err(text: &str, sets: &[&str]) -> String {
        match load(text, sets) {
            Ok(_) => panic!("loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn loads_and_spans_point_into_file() {
        let s = load(SMALL, &[]).unwrap();
        assert_eq!(s.processes.len(), 2);
        let Stmt::Op(op) = &s.processes[0].program[1] else { panic!() };
        assert_eq!((op.span.line, op.span.col), (21, 1));
        assert_eq!(&SMALL[op.span.offset as usize..][..op.span.len as usize], "mmap a anon 4K");
        assert_eq!(s.processes[0].span.line, 18);
        let e = s.error_at(op.span, "no region");
        assert_eq!(e.to_string(), "t.toml:21:1: no region");
    }

    #[test]
    fn keys_made_by_dotted_keys_and_headers_have_positions() {
        let base = "[machine]\nmemory = \"64MiB\"\n[[process]]\nname = \"p\"\nprogram = \"wait\"\n";
        for (extra, at) in [
            ("[vars]\nx.y = 1\n", "t.toml:7:1:"),
            ("[vars.x]\ny = 1\n", "t.toml:6:1:"),
            ("[machine.zones.Normal]\nx = 1\n", "t.toml:6:1:"),
            ("[machine.cost]\nlru_scan.x = \"1ns\"\n", "t.toml:7:1:"),
            ("[swap]\nsize = \"1GiB\"\ndisk.x = 1\n", "t.toml:8:1:"),
        ] {
            let e = err(&format!("{base}{extra}"), &[]);
            assert!(e.starts_with(at), "{extra:?}: {e}");
        }
        // And the rest of such a file keeps its positions.
        let e = err(&format!("{base}[vars]\nx.y = 1\n").replace("64MiB", "64MiBs"), &[]);
        assert!(e.starts_with("t.toml:2:10:"), "{e}");
    }

    #[test]
    fn sets_apply() {
        let s = load(
            SMALL,
            &[
                "machine.memory=3584MiB",
                "vm.swappiness=100",
                "seed=7",
                "process.loader.count=2",
                "process.1.cpu=1",
                "disk.sda.bandwidth=50MB/s",
                "machine.reserved=4096",
            ],
        )
        .unwrap();
        assert_eq!(s.file.machine.memory, "3584MiB");
        assert_eq!(s.file.vm.get("swappiness").and_then(|v| v.as_integer()), Some(100));
        assert_eq!(s.file.seed, 7);
        assert_eq!(s.processes[0].count, 2);
        assert_eq!(s.processes[1].cpu, Some(1));
        assert_eq!(s.file.disks[0].bandwidth.as_deref(), Some("50MB/s"));
        assert_eq!(s.file.machine.reserved.as_deref(), Some("4096"));
        assert_eq!(s.sets[0], ("machine.memory".to_string(), "3584MiB".to_string()));
    }

    #[test]
    fn set_program_spans_point_into_the_set() {
        let s = load(SMALL, &["seed=1", "process.other.program=wait; mmap b anon 8K"]).unwrap();
        let Stmt::Op(op) = &s.processes[1].program[1] else { panic!() };
        assert_eq!(s.error_at(op.span, "boom").to_string(), "--set process.other.program=wait; mmap b anon 8K: boom");
        assert_eq!(op.span.col as usize, "process.other.program=wait; ".len() + 1);
        let e = err(SMALL, &["process.other.program=wiat"]);
        assert_eq!(e, "--set process.other.program=wiat: unknown operation `wiat`; did you mean `wait`?");
        let e = load(SMALL, &["process.other.program=wiat"]).unwrap_err();
        assert_eq!(e.byte_range(), Some(22..26));
    }

    #[test]
    fn file_errors() {
        let bad = SMALL.replace("memory = \"2GiB\"", "memroy = \"2GiB\"");
        assert_eq!(err(&bad, &[]), "t.toml:5:1: unknown key `memroy` in [machine]; did you mean `memory`?");
        let bad = SMALL.replace("\"2GiB\"", "\"2Gib\"");
        assert!(err(&bad, &[]).starts_with("t.toml:5:10: unknown size unit `Gib`"));
        let bad = SMALL.replace("mmap a anon 4K", "mmap a anon");
        assert_eq!(err(&bad, &[]), "t.toml:21:1: mmap needs a length");
        let bad = SMALL.replace("program = \"wait\"", "program = \"wait\"\nname = \"x\"");
        assert!(err(&bad, &[]).starts_with("t.toml:27:1: duplicate key"), "{}", err(&bad, &[]));
        let bad = SMALL.replace("name = \"other\"", "name = \"loader\"");
        assert_eq!(err(&bad, &[]), "t.toml:25:8: duplicate process name `loader` (first defined on line 18)");
        let bad = SMALL.replace("chunk{i}", "chunk");
        assert!(err(&bad, &[]).starts_with("t.toml:13:8: `count = 4` needs `{i}`"));
        let bad = SMALL.replace("size = \"1MiB\"", "size = \"1MiB\"\ndisk = \"sdb\"");
        assert_eq!(err(&bad, &[]), "t.toml:16:8: no disk named `sdb`; did you mean `sda`?");
        let bad = SMALL.replace("cpus = 2", "cpus = \"two\"");
        assert_eq!(err(&bad, &[]), "t.toml:6:8: expected u32, found string \"two\"");
    }

    #[test]
    fn machine_cost_entries_are_checked() {
        let s = load(SMALL, &["machine.cost.lru_scan=240ns"]).unwrap();
        let cost = s.file.machine.cost.as_ref().and_then(|c| c.get("lru_scan"));
        assert_eq!(cost.and_then(|v| v.as_str()), Some("240ns"));
        assert_eq!(
            err(SMALL, &["machine.cost.lru_scna=240ns"]),
            "--set machine.cost.lru_scna=240ns: unknown cost entry `lru_scna`; did you mean `lru_scan`?"
        );
        assert_eq!(
            err(SMALL, &["machine.cost.lru_scan=0ns"]),
            "--set machine.cost.lru_scan=0ns: a cost must be at least 1ns"
        );
        assert!(err(SMALL, &["machine.cost.lru_scan=240"])
            .starts_with("--set machine.cost.lru_scan=240: expected a duration"));
    }

    #[test]
    fn set_errors() {
        assert_eq!(
            err(SMALL, &["machine.memory"]),
            "--set machine.memory: malformed --set: expected KEY=VALUE, found no `=`"
        );
        assert_eq!(
            err(SMALL, &["process.5.count=2"]),
            "--set process.5.count=2: there is no `process` number 5: the scenario has 2 (counting from 0)"
        );
        assert_eq!(
            err(SMALL, &["process.lodaer.count=2"]),
            "--set process.lodaer.count=2: there is no `process` named `lodaer`; did you mean `loader`?"
        );
        assert_eq!(
            err(SMALL, &["machine.memroy=1G"]),
            "--set machine.memroy=1G: unknown key `memroy` in [machine]; did you mean `memory`?"
        );
        assert_eq!(err(SMALL, &["machine.memory=3Gx"]), "--set machine.memory=3Gx: unknown size unit `Gx` in `3Gx`: expected one of B K KiB M MiB G GiB T TiB KB MB GB TB");
        assert_eq!(err(SMALL, &["machine.cpus=many"]), "--set machine.cpus=many: expected u32, found string \"many\"");
        assert_eq!(err(SMALL, &["seed.x=1"]), "--set seed.x=1: `seed` is a value, not a table: cannot set `seed.x`");
        assert_eq!(
            err(SMALL, &["netrx.0.rate=1"]),
            "--set netrx.0.rate=1: the scenario has no [[netrx]]: cannot set `netrx.0.rate`"
        );
        assert_eq!(err(SMALL, &["a..b=1"]), "--set a..b=1: malformed --set: empty key component in `a..b`");
        assert_eq!(
            err(SMALL, &["linux-2.4.9:reclaim.bdflush=true"]),
            "--set linux-2.4.9:reclaim.bdflush=true: `linux-2.4.9:` scopes a set to one profile of `vmlab reproduce`, \
             which runs several; this run has one profile: write `--set reclaim.bdflush=true`"
        );
    }

    #[test]
    fn vars_define_program_variables() {
        let text = SMALL.replace("let n = 0\nmmap a anon 4K", "mmap a anon len\ntouch a count=reps")
            + "\n[vars]\nlen = \"8KiB\"\nreps = 3\n";
        let s = load(&text, &["vars.reps=5"]).unwrap();
        let p = &s.processes[0].program;
        let lets: Vec<(String, i64)> = p
            .iter()
            .filter_map(|st| match st {
                Stmt::Let { name, value: Expr::Int(v, _), .. } => Some((name.clone(), *v)),
                _ => None,
            })
            .collect();
        assert_eq!(lets, vec![("len".to_string(), 8192), ("reps".to_string(), 5)]);
        // Without [vars] the same program names unknown variables.
        let bare = SMALL.replace("let n = 0\nmmap a anon 4K", "mmap a anon len");
        assert!(err(&bare, &[]).contains("unknown variable `len`"), "{}", err(&bare, &[]));
        let bad = SMALL.to_string() + "\n[vars]\ntid = 1\n";
        assert!(err(&bad, &[]).contains("`tid` cannot be a variable"), "{}", err(&bad, &[]));
        let bad = SMALL.to_string() + "\n[vars]\nx = \"3furlongs\"\n";
        assert!(err(&bad, &[]).contains("unknown unit"), "{}", err(&bad, &[]));
        let bad = SMALL.to_string() + "\n[vars]\nx = [1]\n";
        assert!(err(&bad, &[]).starts_with("t.toml:"), "{}", err(&bad, &[]));
        // A declared size or duration keeps its kind under --set; plain integers stay accepted.
        let timed = text.clone() + "at = \"0s\"\n";
        let e = err(&timed, &["vars.at=5MiB"]);
        assert!(e.contains("--set vars.at=5MiB: `vars.at` is a duration (declared `0s`), and `5MiB` is a size"), "{e}");
        let e = err(&timed, &["vars.len=2s"]);
        assert!(e.contains("`vars.len` is a size (declared `8KiB`), and `2s` is a duration"), "{e}");
        assert!(load(&timed, &["vars.at=2h", "vars.len=16KiB", "vars.at=7"]).is_ok());
    }

    #[test]
    fn quantities_are_resolved_once() {
        let text = SMALL.to_string() + "\n[swap]\nsize = \"1GiB\"\ndisk = \"sda\"\n";
        let s = load(&text, &["duration=10s", "disk.sda.seek=8ms"]).unwrap();
        assert_eq!(s.setup.machine.memory_bytes, 2 << 30);
        assert_eq!(s.setup.duration_ns, Some(10_000_000_000));
        assert_eq!(s.setup.disks[0].seek_ns, Some(8_000_000));
        assert_eq!(s.setup.disks[0].bandwidth_bps, Some(24_000_000));
        assert_eq!(s.setup.files[0].bytes, 1 << 20);
        assert_eq!(s.setup.swap.as_ref().map(|w| (w.bytes, w.disk)), Some((1 << 30, 0)));
        assert_eq!(s.setup.disks[0].device_bandwidth_bps, None, "no link unless asked");
        let s = load(SMALL, &["disk.sda.device_bandwidth=\"1GB/s\""]).unwrap();
        assert_eq!(s.setup.disks[0].device_bandwidth_bps, Some(1_000_000_000));
        assert_eq!(s.setup.disks[0].write_bandwidth_bps, None, "writes at the read bandwidth unless asked");
        let s = load(SMALL, &["disk.sda.write_bandwidth=\"515MB/s\""]).unwrap();
        assert_eq!(s.setup.disks[0].write_bandwidth_bps, Some(515_000_000));
        let e = err(SMALL, &["disk.sda.write_bandwidth=\"1GB\""]);
        assert!(e.contains("write_bandwidth") && e.contains("must end in `/s`"), "{e}");
        let e = err(SMALL, &["disk.sda.write_bandwidth=\"0B/s\""]);
        assert!(e.contains("write_bandwidth"), "{e}");
        assert_eq!(s.setup.disks[0].device_write_bandwidth_bps, None, "writes at the link's read rate unless asked");
        let s = load(SMALL, &["disk.sda.device_write_bandwidth=\"1.4GB/s\""]).unwrap();
        assert_eq!(s.setup.disks[0].device_write_bandwidth_bps, Some(1_400_000_000));
        // 0 is the default spelled out (as `device_bandwidth`'s 0 is no link).
        let s = load(SMALL, &["disk.sda.device_write_bandwidth=\"0B/s\""]).unwrap();
        assert_eq!(s.setup.disks[0].device_write_bandwidth_bps, Some(0));
        let e = err(SMALL, &["disk.sda.device_write_bandwidth=\"1GB\""]);
        assert!(e.contains("device_write_bandwidth") && e.contains("must end in `/s`"), "{e}");
        assert_eq!(s.setup.disks[0].write_completion_latency_ns, None, "no completion latency unless asked");
        let s = load(SMALL, &["disk.sda.write_completion_latency=\"2.5ms\""]).unwrap();
        assert_eq!(s.setup.disks[0].write_completion_latency_ns, Some(2_500_000));
        let e = err(SMALL, &["disk.sda.write_completion_latency=\"2.5MB\""]);
        assert!(e.contains("write_completion_latency"), "{e}");
        let s = load(SMALL, &["disk.sda.ring_descriptors=256"]).unwrap();
        assert_eq!(s.setup.disks[0].ring_descriptors, Some(256));
        let e = err(SMALL, &["disk.sda.ring_descriptors=2"]);
        assert!(e.contains("ring_descriptors") && e.contains("at least 3"), "{e}");
        let s = load(SMALL, &["disk.sda.nr_requests=128", "disk.sda.wbt_lat_usec=2000", "disk.sda.write_cache=true"])
            .unwrap();
        let d = &s.setup.disks[0];
        assert_eq!((d.nr_requests, d.wbt_lat_usec, d.write_cache), (Some(128), Some(2000), Some(true)));
        let e = err(SMALL, &["disk.sda.nr_requests=0"]);
        assert!(e.contains("nr_requests") && e.contains("at least 1"), "{e}");
        assert_eq!(s.setup.disks[0].deadline, None, "the scheduler is none unless asked");
        let s = load(SMALL, &["disk.sda.scheduler=\"mq-deadline\"", "disk.sda.fifo_batch=4"]).unwrap();
        assert_eq!(s.setup.disks[0].deadline, Some((2, 4)), "writes_starved defaults to the kernel's 2");
        let s = load(SMALL, &["disk.sda.scheduler=\"none\"", "disk.sda.writes_starved=1"]).unwrap();
        assert_eq!(s.setup.disks[0].deadline, None, "iosched/ tunables mean nothing under none");
        let e = err(SMALL, &["disk.sda.scheduler=\"bfq\""]);
        assert!(e.contains("scheduler") && e.contains("unknown scheduler `bfq`"), "{e}");
        let e = err(SMALL, &["disk.sda.device_bandwidth=\"1GB\""]);
        assert!(e.contains("device_bandwidth") && e.contains("must end in `/s`"), "{e}");
        assert_eq!(load(SMALL, &[]).unwrap().setup.disks[0].io_end_pages, 0, "per request unless asked");
        let s = load(SMALL, &["disk.sda.io_end_pages=2048"]).unwrap();
        assert_eq!(s.setup.disks[0].io_end_pages, 2048);
        let e = err(SMALL, &["disk.sda.io_end_pages=-1"]);
        assert!(e.contains("io_end_pages"), "{e}");
        assert!(!load(SMALL, &[]).unwrap().setup.disks[0].loop_worker, "no loop worker unless asked");
        assert!(load(SMALL, &["disk.sda.loop_worker=true"]).unwrap().setup.disks[0].loop_worker);
        let e = err(SMALL, &["disk.sda.loop_worker=1"]);
        assert!(e.contains("loop_worker"), "{e}");
        assert_eq!(load(SMALL, &[]).unwrap().setup.disks[0].driver_depth, 0, "no list unless asked");
        assert_eq!(load(SMALL, &["disk.sda.driver_depth=1"]).unwrap().setup.disks[0].driver_depth, 1);
        let e = err(SMALL, &["disk.sda.driver_depth=-1"]);
        assert!(e.contains("driver_depth"), "{e}");
    }

    #[test]
    fn kmem_sources_are_checked_where_they_are_written() {
        let kmem = |extra: &str| format!("{SMALL}\n[[kmem]]\nsize = \"8MiB\"\n{extra}");
        let text = kmem("lifetime = \"0s\"\n");
        let line = text.lines().position(|l| l.starts_with("lifetime")).unwrap() + 1;
        assert!(err(&text, &[]).starts_with(&format!("t.toml:{line}:")), "{}", err(&text, &[]));
        let text = kmem("lifetime = \"1h\"\nobject = 16384\n");
        assert!(err(&text, &[]).contains("kmalloc caches hold 8 to 8192"), "{}", err(&text, &[]));
        let s = load(&kmem("lifetime = \"1h\"\nobject = 300\n"), &[]).unwrap();
        let k = &s.setup.kmem[0];
        assert_eq!((k.population, k.lifetime_ns, k.object_bytes), (8 << 20 >> 9, 3_600_000_000_000, Some(300)));
        let s = load(&kmem("lifetime = \"1h\"\n"), &["kmem.0.size=\"4MiB\""]).unwrap();
        assert_eq!(s.setup.kmem[0].population, 1024, "whole pages");
    }

    #[test]
    fn slow_readers_and_fork_memory_are_checked_where_they_are_written() {
        let netrx = |extra: &str| format!("{SMALL}\n[[netrx]]\nrate = \"100/s\"\nlifetime = \"10ms\"\n{extra}");
        let text = netrx("slow_share = 1.5\nslow_lifetime = \"30s\"\n");
        let line = text.lines().position(|l| l.starts_with("slow_share")).unwrap() + 1;
        assert_eq!(err(&text, &[]), format!("t.toml:{line}:14: slow_share 1.5 is not a share (0 to 1)"));
        let text = netrx("slow_lifetime = \"30s\"\n");
        assert!(err(&text, &[]).contains("`slow_lifetime` needs `slow_share`"), "{}", err(&text, &[]));
        let s = load(&netrx("slow_share = 0.02\nslow_lifetime = \"30s\"\n"), &[]).unwrap();
        assert_eq!(s.setup.netrx[0].slow, Some((20_000, 30_000_000_000)));
        let text = format!("{SMALL}\n[fork]\nthread_size = \"12KiB\"\ntask_struct = 5952\n");
        assert!(err(&text, &[]).contains("THREAD_SIZE is a power-of-two number of pages"), "{}", err(&text, &[]));
        let s = load(&format!("{SMALL}\n[fork]\nthread_size = \"8KiB\"\ntask_struct = 5952\n"), &[]).unwrap();
        assert_eq!(s.setup.fork, Some((1, 5952)));
    }

    /// Values the simulator used to reject while building the machine, with no position: the
    /// loader now finds them where they are written.
    #[test]
    fn machine_values_are_checked_where_they_are_written() {
        const NETRX: &str = "\n[[netrx]]\nrate = \"100/s\"\nlifetime = \"10ms\"\nlifetime_dist = \"gamma\"\n";
        let text = SMALL.to_string() + NETRX;
        let line = text.lines().position(|l| l.starts_with("lifetime_dist")).unwrap() + 1;
        assert_eq!(
            err(&text, &[]),
            format!("t.toml:{line}:17: unknown lifetime distribution `gamma`; expected \"fixed\" or \"exponential\"")
        );
        let text = SMALL.to_string() + "\n[fs]\ninode_size = 65536\n";
        let line = text.lines().position(|l| l.starts_with("inode_size")).unwrap() + 1;
        assert_eq!(
            err(&text, &[]),
            format!("t.toml:{line}:14: inode_size is 65536 bytes; a slab object is 8 to 32768 bytes")
        );
        assert_eq!(err(SMALL, &["machine.cpus=5000"]), "--set machine.cpus=5000: `cpus` must be between 1 and 4096");
        // Fuzz seed 21, input 763224: 65,535 nodes on 48 MiB ran for minutes.
        assert_eq!(
            err(SMALL, &["machine.nodes=65535"]),
            "--set machine.nodes=65535: `nodes` must be between 1 and 1024"
        );
        assert!(load(SMALL, &["machine.nodes=1024"]).is_ok());
        let text = SMALL.replace("cpus = 2", "cpus = 2\nzones = { DMA = \"16MiB\", Norml = \"1GiB\" }");
        assert!(
            err(&text, &[]).starts_with("t.toml:7:34: unknown zone `Norml`; expected DMA, DMA32, Normal or HighMem"),
            "{}",
            err(&text, &[])
        );
        let text = SMALL.to_string() + &NETRX.replace("gamma", "fixed") + "order = 11\n";
        assert!(err(&text, &[]).contains("order 11 is too high"), "{}", err(&text, &[]));
    }

    #[test]
    fn mmap_of_a_file_may_omit_the_length() {
        let text = SMALL.replace("mmap a anon 4K", "mmap a file=chunk0\nmmap b file=chunk1 offset=4K");
        let s = load(&text, &[]).unwrap();
        let lens: Vec<bool> = s.processes[0]
            .program
            .iter()
            .filter_map(|st| match st {
                Stmt::Op(op) => match &op.kind {
                    OpKind::Mmap { len, .. } => Some(len.is_none()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(lens, vec![true, true]);
        assert_eq!(err(&SMALL.replace("mmap a anon 4K", "mmap a shm=seg"), &[]), "t.toml:21:1: mmap needs a length");
    }
}
