//! `vmlab run --host`: the machine read from this host (RAM, online CPUs, the vm sysctls that
//! vmlab models, the disks' readahead), with the scenario's workload in a memory cgroup of the
//! scenario's `machine.memory` — what `vmlab real` runs — so that a simulation and a real run
//! compare like with like. Everything is read from files under a root directory (`/`, or
//! `VMLAB_HOST_ROOT` for tests), so a fixture directory stands in for a host.

use std::path::{Path, PathBuf};

pub mod costs;
pub mod disk;
pub mod folios;
pub mod free_pages;

use vmlab_core::workload::{load_scenario, Scenario, ScenarioError};

/// Tests point this at a fixture directory laid out as `/` (`proc/meminfo`, `proc/sys/vm/...`).
pub const HOST_ROOT_ENV: &str = "VMLAB_HOST_ROOT";

/// The disk `run --host` adds for the host's root disk, which holds `machine.foreign_dirty`.
pub const ROOT_DISK: &str = "host-root";

/// The name of the group that stands for `vmlab real`'s cgroup.
pub const LIMIT_GROUP: &str = "vmlab-real";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFacts {
    pub mem_bytes: u64,
    pub cpus: u32,
    /// (vm tunable, value) as `--set vm.NAME=VALUE` takes them.
    pub vm: Vec<(&'static str, u64)>,
    /// Inodes in use (`/proc/sys/fs/inode-nr`: `nr_inodes - nr_unused`), which 6.x's flusher
    /// counts as dirty pages (`machine.inodes_in_use`).
    pub inodes_in_use: Option<u64>,
    /// `/proc/meminfo`'s `Dirty` in kB: the other writers' dirty page cache
    /// (`machine.foreign_dirty`, on the host's root disk).
    pub dirty_kb: Option<u64>,
    /// The order of free blocks the guest reports to its hypervisor
    /// (`machine.page_reporting_order`): set when a virtio balloon offers free page reporting.
    pub page_reporting_order: Option<u8>,
    /// The free memory as reporting has left it now: only with `page_reporting_order`, and
    /// when `/proc/kpageflags` can be read.
    pub free: Option<free_pages::FreeState>,
}

/// `VIRTIO_BALLOON_F_REPORTING` (include/uapi/linux/virtio_balloon.h), a bit of the balloon's
/// `features` string in sysfs (drivers/virtio/virtio.c `features_show`: one character a bit).
const VIRTIO_ID_BALLOON: &str = "0x0005";
const VIRTIO_BALLOON_F_REPORTING: usize = 5;

/// The guest's free page reporting order: mm/page_reporting.c's module parameter, when a
/// virtio balloon has negotiated reporting (the parameter exists whenever the kernel has
/// CONFIG_PAGE_REPORTING, with or without a device that reports).
pub fn page_reporting_order(root: &Path) -> Result<Option<u8>, String> {
    let reports = std::fs::read_dir(root.join("sys/bus/virtio/devices")).into_iter().flatten().flatten().any(|d| {
        let read = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap_or_default();
        read("device").trim() == VIRTIO_ID_BALLOON
            && read("features").as_bytes().get(VIRTIO_BALLOON_F_REPORTING) == Some(&b'1')
    });
    let p = root.join("sys/module/page_reporting/parameters/page_reporting_order");
    if !reports || !p.exists() {
        return Ok(None);
    }
    match read_u64(&p)? {
        o @ 0..=10 => Ok(Some(o as u8)),
        o => Err(format!("{}: order {o} is above the buddy allocator's largest, 10", p.display())),
    }
}

/// `/proc/sys/fs/inode-nr`: "nr_inodes nr_unused" → the inodes in use, as fs/inode.c's
/// `get_nr_dirty_inodes` takes them.
pub fn inodes_in_use(p: &Path) -> Result<Option<u64>, String> {
    let Ok(t) = std::fs::read_to_string(p) else { return Ok(None) };
    let n: Vec<u64> = t
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{}: `{}` is not two numbers", p.display(), t.trim()))?;
    match n[..] {
        [inodes, unused] => Ok(Some(inodes.saturating_sub(unused))),
        _ => Err(format!("{}: `{}` is not two numbers", p.display(), t.trim())),
    }
}

/// The figure of a `/proc/meminfo` text's `KEY:   N kB` line, in kB; `None` without the line.
fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse().ok())
}

/// [`meminfo_field`] of the file `p`; `None` without the file.
pub fn meminfo_kb(p: &Path, key: &str) -> Option<u64> {
    meminfo_field(&std::fs::read_to_string(p).ok()?, key)
}

/// /proc/sys/vm files and the tunables they set.
const SYSCTLS: &[(&str, &str)] = &[
    ("swappiness", "swappiness"),
    ("dirty_ratio", "dirty_ratio"),
    ("dirty_background_ratio", "dirty_background_ratio"),
    ("dirty_expire_centisecs", "dirty_expire_centisecs"),
    ("dirty_writeback_centisecs", "dirty_writeback_centisecs"),
    ("page-cluster", "page_cluster"),
    ("min_free_kbytes", "min_free_kbytes"),
    ("watermark_scale_factor", "watermark_scale_factor"),
];

fn read_u64(p: &Path) -> Result<u64, String> {
    let t = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    t.trim().parse().map_err(|_| format!("{}: `{}` is not a number", p.display(), t.trim()))
}

/// `0-3,6` → 5 CPUs.
fn count_cpus(list: &str) -> Option<u32> {
    let mut n = 0u32;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.trim().parse::<u32>().ok()?.checked_sub(a.trim().parse().ok()?)? + 1,
            None => {
                part.trim().parse::<u32>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// The readahead of the host's disks: the largest `read_ahead_kb` of a whole disk (loop, ram,
/// zram and device-mapper devices are not disks).
fn read_ahead_kb(root: &Path) -> Option<u64> {
    let dir = root.join("sys/block");
    let mut best = None;
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ["loop", "ram", "zram", "dm-", "md", "sr"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        if let Ok(kb) = read_u64(&e.path().join("queue/read_ahead_kb")) {
            best = Some(best.map_or(kb, |b: u64| b.max(kb)));
        }
    }
    best
}

/// The request queue of the device the disk was measured on: what vmlab's request path (blk.rs)
/// takes as `vm.*` tunables, and what this host sets that vmlab reads but does not model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    /// `max_sectors_kb` and `max_segments`: the largest request a plug or a merge builds.
    pub vm: Vec<(&'static str, u64)>,
    /// Scheduler tags (`disk.*.nr_requests`): the writeback throttle's queue depth. As a bound
    /// on the requests queued and in flight (a submitter beyond it sleeps in `blk_mq_get_tag`)
    /// vmlab's scheduler queue does not have it.
    pub nr_requests: Option<u64>,
    /// `wbt_lat_usec` and `write_cache` ("write back": true): the writeback throttle's latency
    /// target and its wake rule (blk_wbt.rs; `disk.*.wbt_lat_usec`, `disk.*.write_cache`).
    pub wbt_lat_usec: Option<u64>,
    pub write_cache: Option<bool>,
    /// The elevator in use (`[mq-deadline]` of the `scheduler` file): `none` and `mq-deadline`
    /// go to `disk.*.scheduler` (mq_deadline.rs), `bfq` and `kyber` only to the summary.
    pub scheduler: Option<String>,
    /// mq-deadline's `iosched/writes_starved` and `iosched/fifo_batch`, when it is in use.
    pub iosched: Vec<(&'static str, u64)>,
    /// A loop device with direct I/O (`loop/dio` is 1, `losetup --direct-io=on`): its writes
    /// wait for the device's worker (`disk.*.loop_worker`, vmlab-core loop_dev.rs).
    pub loop_dio: bool,
    /// A virtio-blk device that did not negotiate indirect descriptors (feature bit 28,
    /// `VIRTIO_RING_F_INDIRECT_DESC`, is 0 in `device/features`): its ring's descriptors, twice
    /// the tags (`mq/0/nr_tags`), as `virtblk_probe` halves the ring for the tag depth. A
    /// request takes one per segment plus two, so the ring, not the tags, bounds requests of
    /// many segments in flight (blk.rs).
    pub ring: Option<u64>,
}

/// `sys/dev/block/MAJ:MIN/queue`, or a partition's disk's (`MAJ:MIN/../queue`: the partition's
/// directory sits inside its disk's, and `..` is taken after the symlink is followed).
fn queue_dir(root: &Path, device: &str) -> Option<PathBuf> {
    let dev = root.join("sys/dev/block").join(device);
    [dev.join("queue"), dev.join("../queue")].into_iter().find(|q| q.join("max_sectors_kb").exists())
}

/// The queue limits of `device` (`major:minor`, as the disk measurement records it); `None`
/// when the host has no such queue (a fixture without one, a network file system).
pub fn queue(root: &Path, device: &str) -> Result<Option<Queue>, String> {
    let Some(dir) = queue_dir(root, device) else { return Ok(None) };
    let mut q = Queue::default();
    for knob in ["max_sectors_kb", "max_segments"] {
        let p = dir.join(knob);
        if p.exists() {
            q.vm.push((knob, read_u64(&p)?));
        }
    }
    let p = dir.join("nr_requests");
    q.nr_requests = if p.exists() { Some(read_u64(&p)?) } else { None };
    let p = dir.join("wbt_lat_usec");
    q.wbt_lat_usec = if p.exists() { Some(read_u64(&p)?) } else { None };
    q.write_cache = std::fs::read_to_string(dir.join("write_cache")).ok().map(|t| t.trim() == "write back");
    let features = std::fs::read_to_string(dir.join("../device/features")).unwrap_or_default();
    let tags = dir.join("../mq/0/nr_tags");
    if features.trim().chars().nth(28) == Some('0') && tags.exists() {
        q.ring = Some(2 * read_u64(&tags)?);
    }
    q.scheduler = std::fs::read_to_string(dir.join("scheduler")).ok().and_then(|t| {
        let t = t.trim();
        match (t.find('['), t.find(']')) {
            (Some(a), Some(b)) if a < b => Some(t[a + 1..b].to_string()),
            _ => t.split_whitespace().next().map(str::to_string),
        }
    });
    q.loop_dio = std::fs::read_to_string(dir.join("../loop/dio")).is_ok_and(|t| t.trim() == "1");
    if q.scheduler.as_deref() == Some("mq-deadline") {
        for knob in ["writes_starved", "fifo_batch"] {
            let p = dir.join("iosched").join(knob);
            if p.exists() {
                q.iosched.push((knob, read_u64(&p)?));
            }
        }
    }
    Ok(Some(q))
}

/// Schedulers vmlab's queue models (`disk.*.scheduler`).
fn modelled(scheduler: &str) -> bool {
    matches!(scheduler, "none" | "mq-deadline")
}

impl Queue {
    pub fn sets(&self) -> Vec<String> {
        self.vm.iter().map(|(k, x)| format!("vm.{k}={x}")).collect()
    }

    /// The ring, for each of the scenario's disks (`disk_sets` gave them the measured device;
    /// without a `[[disk]]`, its `sda`).
    pub fn disk_sets(&self, names: &[String]) -> Vec<String> {
        let fields: Vec<String> = [
            self.ring.map(|r| format!("ring_descriptors={r}")),
            self.nr_requests.map(|n| format!("nr_requests={n}")),
            self.wbt_lat_usec.map(|n| format!("wbt_lat_usec={n}")),
            self.write_cache.map(|w| format!("write_cache={w}")),
            self.scheduler.as_deref().filter(|s| modelled(s)).map(|s| format!("scheduler=\"{s}\"")),
        ]
        .into_iter()
        .flatten()
        .chain(self.iosched.iter().map(|(k, x)| format!("{k}={x}")))
        .collect();
        let sda = ["sda".to_string()];
        let names = if names.is_empty() { &sda[..] } else { names };
        names.iter().flat_map(|n| fields.iter().map(move |f| format!("disk.{n}.{f}"))).collect()
    }

    /// One line for `notes.host_queue`.
    pub fn summary(&self, device: &str) -> String {
        let vm: Vec<String> = self.vm.iter().map(|(k, x)| format!("{k} {x}")).collect();
        let opt = |v: Option<String>| v.unwrap_or_else(|| "?".into());
        let ring = self
            .ring
            .map(|r| format!(", a virtio ring of {r} descriptors (disk.*.ring_descriptors)"))
            .unwrap_or_default();
        let sched = match self.scheduler.as_deref() {
            Some(s) if modelled(s) => {
                let knobs: String = self.iosched.iter().map(|(k, x)| format!(", {k} {x}")).collect();
                format!("scheduler {s}{knobs} (disk.*)")
            }
            other => format!("not modelled: scheduler {}", opt(other.map(str::to_string))),
        };
        format!(
            "{device}: {} (vm.*){ring}; writeback throttle: nr_requests {}, wbt_lat_usec {}, write_cache {} \
             (disk.*); {sched}",
            if vm.is_empty() { "no limits".into() } else { vm.join(", ") },
            opt(self.nr_requests.map(|n| n.to_string())),
            opt(self.wbt_lat_usec.map(|n| n.to_string())),
            opt(self.write_cache.map(|n| n.to_string())),
        )
    }
}

pub fn read(root: &Path) -> Result<HostFacts, String> {
    let meminfo = root.join("proc/meminfo");
    let text = std::fs::read_to_string(&meminfo).map_err(|e| format!("{}: {e}", meminfo.display()))?;
    let kb =
        meminfo_field(&text, "MemTotal").ok_or_else(|| format!("{}: no `MemTotal: N kB` line", meminfo.display()))?;
    let online = root.join("sys/devices/system/cpu/online");
    let cpus = std::fs::read_to_string(&online)
        .ok()
        .and_then(|t| count_cpus(&t))
        .ok_or_else(|| format!("{}: not a CPU list", online.display()))?;
    let mut vm = Vec::new();
    for (file, knob) in SYSCTLS {
        let p = root.join("proc/sys/vm").join(file);
        if p.exists() {
            vm.push((*knob, read_u64(&p)?));
        }
    }
    // dirty_bytes/dirty_background_bytes, when set, replace the ratios: vmlab has only ratios.
    for f in ["dirty_bytes", "dirty_background_bytes"] {
        let p = root.join("proc/sys/vm").join(f);
        if p.exists() && read_u64(&p)? != 0 {
            return Err(format!("{}: set (vmlab models dirty limits as ratios only)", p.display()));
        }
    }
    if let Some(kb) = read_ahead_kb(root) {
        vm.push(("read_ahead_kb", kb));
    }
    let inodes_in_use = inodes_in_use(&root.join("proc/sys/fs/inode-nr"))?;
    let dirty_kb = meminfo_field(&text, "Dirty");
    let page_reporting_order = page_reporting_order(root)?;
    // Whole MiB: a machine's memory is laid out in sections, not to the KiB.
    Ok(HostFacts {
        mem_bytes: kb * 1024 / (1 << 20) * (1 << 20),
        cpus,
        vm,
        inodes_in_use,
        dirty_kb,
        page_reporting_order,
        free: page_reporting_order.and_then(|o| free_pages::read(root, o).ok()),
    })
}

impl HostFacts {
    /// The `--set`s that make the scenario's machine this host.
    pub fn sets(&self) -> Vec<String> {
        let mut v = vec![format!("machine.memory={}", self.mem_bytes), format!("machine.cpus={}", self.cpus)];
        v.extend(self.vm.iter().map(|(k, x)| format!("vm.{k}={x}")));
        v.extend(self.page_reporting_order.map(|o| format!("machine.page_reporting_order={o}")));
        v
    }

    /// The `--set`s of what the host holds at the moment rather than what it is (the inodes in
    /// use, the other writers' dirty pages): a `--set` of the caller's replaces them, to simulate
    /// the moment a record was made.
    pub fn moment_sets(&self) -> Vec<String> {
        let inodes = self.inodes_in_use.map(|n| format!("machine.inodes_in_use={n}"));
        let dirty = self.dirty_kb.map(|kb| format!("machine.foreign_dirty={}", kb * 1024));
        inodes.into_iter().chain(dirty).collect()
    }

    /// The `--set`s of the reported pool a `vmlab real` run of a scenario whose set-up writes
    /// and drops `files` bytes would start from now: the writes take the small blocks first,
    /// then large ones, which the drop frees back unreported (a record pins its runs' own).
    pub fn reporting_sets(&self, files: u64) -> Vec<String> {
        let Some(f) = self.free else { return Vec::new() };
        let large = f.unreported_large().max(files.saturating_sub(f.small));
        vec![
            "machine.reported_at_start=true".to_string(),
            format!("machine.unreported_small={}", f.small),
            format!("machine.unreported_large={large}"),
            format!("machine.reported_free={}", f.reported),
        ]
    }
}

/// Put every process and every top-level group of `sc` under the group `vmlab real` makes,
/// limited to `memory` bytes (and `memory + swap` of memory and swap, as its v1 cgroup).
pub fn wrap_in_limit(sc: &mut Scenario, memory: u64, swap: u64) {
    sc.wrap_in_limit(LIMIT_GROUP, memory, swap);
}

/// In a fixture root, the disk measurement `vmlab run --host` would otherwise make, and the cost
/// calibration it would otherwise take from the cache.
pub const FIXTURE_DISK: &str = "vmlab-host-disk.json";
pub const FIXTURE_COSTS: &str = "vmlab-host-costs.json";

/// What `--host` took from the host, for `params`.
pub struct Taken {
    /// The `--set`s that make the scenario's machine this host.
    pub sets: Vec<String>,
    pub disk: disk::Measured,
    /// The calibrated cost entries, when there is a calibration.
    pub costs: Option<Vec<(String, u64)>>,
    /// The measured device's request queue, when the host has one.
    pub queue: Option<Queue>,
}

/// Where the host's disk is measured (the file system `vmlab real --dir` works in) and whether
/// to measure it again rather than take the cached figures.
pub struct DiskOpts {
    pub dir: PathBuf,
    pub remeasure: bool,
}

/// The `--set`s that give every disk of the scenario the host's measured disk: `vmlab real` puts
/// the scenario's files and its swap file on the one file system. A scenario without a
/// `[[disk]]` gets one (vmlab's default disk is named `sda`).
pub fn disk_sets(names: &[String], p: &vmlab_core::disk::DiskParams) -> Vec<String> {
    let fields = [
        ("model", "\"nvme\"".to_string()),
        ("bandwidth", format!("\"{}B/s\"", p.bandwidth_bps)),
        ("write_bandwidth", format!("\"{}B/s\"", p.bandwidth_for(true))),
        ("seek", format!("\"{}ns\"", p.seek_ns)),
        ("latency", format!("\"{}ns\"", p.latency_ns)),
        ("queue_depth", p.queue_depth.to_string()),
        ("spindles", p.spindles.to_string()),
        ("device_bandwidth", format!("\"{}B/s\"", p.device_bandwidth_bps)),
        ("chunk", p.chunk_bytes.to_string()),
        // 0 without a write probe at depth (a `/4` measurement): the writes share the read
        // ceiling. Spelled out so that these sets replayed over another measurement keep it.
        ("device_write_bandwidth", format!("\"{}B/s\"", p.device_write_bandwidth_bps)),
        // 0 unless measured (a `/5` or older measurement has no figure); spelled out as above.
        ("write_completion_latency", format!("\"{}ns\"", p.write_completion_latency_ns)),
    ];
    if names.is_empty() {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        return vec![format!("disk=[{{ name = \"sda\", {} }}]", body.join(", "))];
    }
    names.iter().flat_map(|n| fields.iter().map(move |(k, v)| format!("disk.{n}.{k}={v}"))).collect()
}

/// The scenario as `--host` runs it: loaded once as written (its errors point into the file),
/// then again on this host's machine, its workload limited to the scenario's memory.
pub fn scenario(
    path: &Path,
    sets: &[String],
    dopts: &DiskOpts,
    profile: Option<&str>,
) -> Result<(Scenario, Taken), Result<ScenarioError, String>> {
    // The host's other writers' dirty pages (`machine.foreign_dirty`, a moment figure `real-table.py`
    // passes per run) are the host's page cache, not the scenario's: the scenario's own machine
    // would refuse more of them than its memory, so they are checked on the host-sized machine below.
    // So are the host's free memory by reporting state (a moment figure too), which needs the
    // host's `machine.page_reporting_order`.
    let host_only =
        ["machine.foreign_dirty", "machine.reported_at_start", "machine.unreported_", "machine.reported_free"];
    let own_sets: Vec<String> =
        sets.iter().filter(|s| !host_only.iter().any(|h| s.trim_start().starts_with(h))).cloned().collect();
    let own = load_scenario(path, &own_sets).map_err(Ok)?;
    let fixture = std::env::var_os(HOST_ROOT_ENV).map(PathBuf::from);
    let root = fixture.clone().unwrap_or_else(|| PathBuf::from("/"));
    let facts = read(&root).map_err(|e| Err(format!("--host: {e}")))?;
    let measured = match &fixture {
        Some(r) => {
            let f = r.join(FIXTURE_DISK);
            std::fs::read_to_string(&f)
                .map_err(|e| e.to_string())
                .and_then(|t| disk::Measured::from_json(&t))
                .map_err(|e| Err(format!("--host: {}: {e}", f.display())))?
        }
        None => disk::get(&dopts.dir, dopts.remeasure).map_err(|e| Err(format!("--host: the disk: {e}")))?,
    };
    let costs_file = match &fixture {
        Some(r) => Some(r.join(FIXTURE_COSTS)),
        None => costs::cache_path(),
    };
    let queue = queue(&root, &measured.device).map_err(|e| Err(format!("--host: the disk's queue: {e}")))?;
    let costs = match costs_file {
        Some(f) => costs::load(&f).map_err(|e| Err(format!("--host: the cost calibration: {e}")))?,
        None => None,
    };
    let memory = own.setup.machine.memory_bytes;
    if facts.mem_bytes < memory {
        return Err(Err(format!(
            "--host: the scenario's {memory} bytes of memory do not fit in this host's {} (MemTotal)",
            facts.mem_bytes
        )));
    }
    // The calibration, the disk and its queue before the command line's `--set`s, so that `--set
    // machine.cost.X`, `--set disk.sda.bandwidth` or `--set vm.max_sectors_kb` asks "what if" of
    // this host; the machine after them, as the command line's `machine.memory` is the limit's.
    let names: Vec<String> = own.setup.disks.iter().map(|d| d.name.clone()).collect();
    let mut before = costs.as_deref().map(costs::sets).unwrap_or_default();
    before.extend(disk_sets(&names, &measured.params()));
    before.extend(queue.iter().flat_map(Queue::sets));
    before.extend(queue.iter().flat_map(|q| q.disk_sets(&names)));
    // The file system `vmlab real` works in reads large folios: so do the disks, when the
    // profile's kernel can (a 2.x row reads single pages whatever the file system).
    let name = profile.or(own.file.profile.as_deref()).unwrap_or(vmlab_core::profiles::DEFAULT_PROFILE);
    let kernel_can = vmlab_core::profiles::find(name).is_some_and(|p| vmlab_core::vmscan::has_large_folios(&p));
    if kernel_can && folios::large_folios(&root, &dopts.dir) == Some(true) {
        let disks = if names.is_empty() { vec!["sda".to_string()] } else { names.clone() };
        before.extend(disks.iter().map(|n| format!("disk.{n}.large_folios=true")));
        // How the host's readahead ramps folio orders matters only where it reads folios.
        if folios::ra_order_in_state(&root) == Some(true) {
            before.push("reclaim.ra_order_in_state=true".to_string());
        }
    }
    // And ext4 with dioread_nolock ends a mapped extent's writeback together.
    if folios::dioread_nolock(&root, &dopts.dir) == Some(true) {
        let disks = if names.is_empty() { vec!["sda".to_string()] } else { names.clone() };
        before.extend(disks.iter().map(|n| format!("disk.{n}.io_end_pages={}", folios::EXT4_IO_END_PAGES)));
    }
    // Behind blk-mq's queue the writeback throttle holds reclaim's swap writes as the host's
    // kernel does.
    let has_queue = vmlab_core::profiles::find(name).is_some_and(|p| p.blk_mq);
    if has_queue && folios::wbt_swap_hiprio(&root) == Some(true) {
        before.push("reclaim.wbt_swap_hiprio=true".to_string());
    }
    // A loop device's writes go through its worker, a kworker that needs a CPU (loop_dev.rs);
    // vmlab's worker stands in front of the `none` scheduler only, the loop's default.
    let loop_dio = queue.as_ref().is_some_and(|q| q.loop_dio && q.scheduler.as_deref() == Some("none"));
    if has_queue && loop_dio {
        let disks = if names.is_empty() { vec!["sda".to_string()] } else { names.clone() };
        before.extend(disks.iter().map(|n| format!("disk.{n}.loop_worker=true")));
    }
    // `vmlab real` runs in a memory cgroup: its limit reclaim reads the statistics as the host's
    // kernel flushes them.
    let has_memcg = vmlab_core::profiles::find(name).is_some_and(|p| p.memcg);
    if has_memcg && folios::memcg_flush_ratelimited(&root) == Some(true) {
        before.push("reclaim.memcg_flush_ratelimited=true".to_string());
    }
    // And `vmlab real` reads its group's memory.stat at every poll, which flushes them.
    if has_memcg {
        before.push(format!("reclaim.memcg_stat_poll_ms={}", crate::real::run::POLL_MS));
        before.push(format!("reclaim.memcg_stat_poll_work_us={}", crate::real::run::POLL_WORK_US));
    }
    // Before the caller's --sets, so that one can pin it.
    before.extend(facts.moment_sets());
    let files: u64 = own.setup.files.iter().map(|f| f.bytes * f.count as u64).sum::<u64>()
        + own.setup.filetrees.iter().map(|t| t.total_bytes).sum::<u64>();
    // A caller that says whether the pool was reported (a record made before `vmlab real` noted
    // it pins `reported_at_start=false`) decides alone: the live figures would contradict it.
    if !sets.iter().any(|s| s.trim_start().starts_with("machine.reported_at_start")) {
        before.extend(facts.reporting_sets(files));
    }
    let after = facts.sets();
    let mut sc = load_scenario(path, &[&before[..], sets, &after[..]].concat()).map_err(Ok)?;
    if sc.setup.machine.foreign_dirty_bytes > 0 && sc.file.machine.foreign_disk.is_none() {
        // The other writers' pages are on the host's root disk, the one measured: a disk of its
        // own beside the scenario's (which `--set`s may have made another device).
        let root = load_scenario(path, &[&before[..], &after[..]].concat()).map_err(Ok)?;
        let mut d = root.setup.disks.into_iter().next().ok_or_else(|| Err("--host: no disk".to_string()))?;
        d.name = ROOT_DISK.to_string();
        sc.setup.machine.foreign_disk = sc.setup.disks.len();
        sc.setup.disks.push(d);
    }
    wrap_in_limit(&mut sc, memory, own.setup.swap.as_ref().map_or(0, |s| s.bytes));
    before.extend(after);
    Ok((sc, Taken { sets: before, disk: measured, costs, queue }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(files: &[(&str, &str)]) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vmlab-host-test-{}-{}", std::process::id(), files.len()));
        let _ = std::fs::remove_dir_all(&d);
        for (p, t) in files {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        }
        d
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpus("0-1\n"), Some(2));
        assert_eq!(count_cpus("0-3,6,8-9"), Some(7));
        assert_eq!(count_cpus(""), None);
        assert_eq!(count_cpus("3-1"), None);
        assert_eq!(count_cpus("x"), None);
    }

    /// This host's balloon (`virtio0`, device 5) offers feature bit 5, free page reporting.
    #[test]
    fn a_balloon_that_reports_sets_the_reporting_order() {
        let files = |features: &str| {
            fixture(&[
                ("proc/meminfo", "MemTotal:       24567890 kB\n"),
                ("sys/devices/system/cpu/online", "0-1\n"),
                ("sys/module/page_reporting/parameters/page_reporting_order", "9\n"),
                ("sys/bus/virtio/devices/virtio0/device", "0x0005\n"),
                ("sys/bus/virtio/devices/virtio0/features", features),
                ("sys/bus/virtio/devices/virtio1/device", "0x0002\n"),
                ("sys/bus/virtio/devices/virtio1/features", "0010011\n"),
            ])
        };
        let f = read(&files("01100101000000000000000000000000100000\n")).unwrap();
        assert_eq!(f.page_reporting_order, Some(9));
        assert!(f.sets().contains(&"machine.page_reporting_order=9".to_string()), "{:?}", f.sets());
        let f = read(&files("01100001000000000000000000000000100000\n")).unwrap();
        assert_eq!(f.page_reporting_order, None, "a balloon without feature bit 5 reports nothing");
    }

    #[test]
    fn a_reporting_guest_starts_from_its_free_pool() {
        // Frames 0..1024 one reported order-10 block (its head BUDDY | UPTODATE, its tails BUDDY),
        // then four free order-0 pages among the rest.
        let mut flags = vec![0u64; 2048];
        flags[..1024].fill(1 << 10);
        flags[0] |= 1 << 3;
        let bytes: Vec<u8> = flags.iter().flat_map(|x| x.to_le_bytes()).collect();
        let kpf = String::from_utf8(bytes).unwrap();
        let d = fixture(&[
            ("proc/meminfo", "MemTotal:       24567890 kB\n"),
            ("sys/devices/system/cpu/online", "0-1\n"),
            ("sys/module/page_reporting/parameters/page_reporting_order", "9\n"),
            ("sys/bus/virtio/devices/virtio0/device", "0x0005\n"),
            ("sys/bus/virtio/devices/virtio0/features", "01100101\n"),
            (
                "proc/buddyinfo",
                "Node 0, zone   Normal      4      0      0      0      0      0      0      0      0      0      1 \n",
            ),
            ("proc/kpageflags", &kpf),
        ]);
        let f = read(&d).unwrap();
        assert_eq!(f.free, Some(free_pages::FreeState { small: 4 << 12, large: 4 << 20, reported: 4 << 20 }));
        let sets = |files| f.reporting_sets(files).join(" ");
        assert_eq!(
            sets(0),
            "machine.reported_at_start=true machine.unreported_small=16384 machine.unreported_large=0 machine.reported_free=4194304"
        );
        // vmlab real's set-up writes the scenario's files into the small blocks first, and drops them.
        assert!(sets(1 << 20).contains("machine.unreported_large=1032192"), "{}", sets(1 << 20));
        // What `read` gives a host without a reporting balloon.
        let quiet = HostFacts { page_reporting_order: None, free: None, ..f.clone() };
        assert!(quiet.reporting_sets(0).is_empty(), "a machine that does not report has no pool to start from");
    }

    #[test]
    fn a_host_from_its_files() {
        let d = fixture(&[
            ("proc/meminfo", "MemTotal:       24567890 kB\nMemFree:  100 kB\n"),
            ("sys/devices/system/cpu/online", "0-1\n"),
            ("proc/sys/vm/swappiness", "60\n"),
            ("proc/sys/vm/dirty_ratio", "20\n"),
            ("proc/sys/vm/page-cluster", "3\n"),
            ("proc/sys/vm/dirty_bytes", "0\n"),
            ("proc/sys/fs/inode-nr", "103712\t12\n"),
            ("sys/block/vda/queue/read_ahead_kb", "8192\n"),
            ("sys/block/loop0/queue/read_ahead_kb", "16384\n"),
        ]);
        let f = read(&d).unwrap();
        assert_eq!(f.mem_bytes, 23992 << 20, "MemTotal in whole MiB");
        assert_eq!(f.cpus, 2);
        assert_eq!(f.vm, [("swappiness", 60), ("dirty_ratio", 20), ("page_cluster", 3), ("read_ahead_kb", 8192)]);
        assert_eq!(
            f.sets(),
            [
                "machine.memory=25157435392",
                "machine.cpus=2",
                "vm.swappiness=60",
                "vm.dirty_ratio=20",
                "vm.page_cluster=3",
                "vm.read_ahead_kb=8192"
            ]
        );
        assert_eq!(f.moment_sets(), ["machine.inodes_in_use=103700"], "inode-nr's in use, less unused");
        assert_eq!(queue(&d, "254:0"), Ok(None), "no sys/dev/block/254:0: no queue");
        std::fs::write(d.join("proc/sys/fs/inode-nr"), "103712\n").unwrap();
        assert!(read(&d).unwrap_err().contains("inode-nr"));
        std::fs::write(d.join("proc/sys/fs/inode-nr"), "103712 12\n").unwrap();
        std::fs::write(d.join("proc/sys/vm/dirty_bytes"), "1000000").unwrap();
        assert!(read(&d).unwrap_err().contains("dirty_bytes"));
        std::fs::write(d.join("proc/meminfo"), "MemFree: 1 kB\n").unwrap();
        assert!(read(&d).unwrap_err().contains("MemTotal"));
        std::fs::write(d.join("proc/meminfo"), "Dirty:     30184 kB\nWriteback:    0 kB\nWritebackTmp: 7 kB\n")
            .unwrap();
        let m = d.join("proc/meminfo");
        assert_eq!((meminfo_kb(&m, "Dirty"), meminfo_kb(&m, "Writeback")), (Some(30184), Some(0)), "not WritebackTmp");
        assert_eq!(meminfo_kb(&m, "Cached"), None);
        assert_eq!(meminfo_kb(&d.join("proc/none"), "Dirty"), None);
        // With its Dirty line the host's other writers' dirty pages are a moment figure too.
        std::fs::write(d.join("proc/meminfo"), "MemTotal:       24567890 kB\nDirty:     30184 kB\n").unwrap();
        std::fs::remove_file(d.join("proc/sys/vm/dirty_bytes")).unwrap();
        assert_eq!(
            read(&d).unwrap().moment_sets(),
            ["machine.inodes_in_use=103700", "machine.foreign_dirty=30908416"],
            "30,184 kB of other writers' dirty pages"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// The queue of the measured device, and of a partition's disk (the layout of sysfs: the
    /// partition's directory inside its disk's, `sys/dev/block/MAJ:MIN` a symlink to either).
    #[test]
    fn the_measured_devices_queue() {
        let d = fixture(&[
            ("sys/devices/virtio1/block/vda/queue/max_sectors_kb", "4096\n"),
            ("sys/devices/virtio1/block/vda/queue/max_segments", "254\n"),
            ("sys/devices/virtio1/block/vda/queue/nr_requests", "256\n"),
            ("sys/devices/virtio1/block/vda/queue/scheduler", "none [mq-deadline] kyber bfq\n"),
            ("sys/devices/virtio1/block/vda/queue/iosched/writes_starved", "2\n"),
            ("sys/devices/virtio1/block/vda/queue/iosched/fifo_batch", "16\n"),
            ("sys/devices/virtio1/block/vda/queue/iosched/write_expire", "5000\n"),
            ("sys/devices/virtio1/block/vda/mq/0/nr_tags", "128\n"),
            ("sys/devices/virtio1/features", "0010001001100100000000000000010010000000000000000000000000000000\n"),
            ("sys/devices/virtio1/block/vda/vda1/partition", "1\n"),
            ("sys/devices/virtual/block/loop0/queue/max_sectors_kb", "127\n"),
        ]);
        std::fs::create_dir_all(d.join("sys/dev/block")).unwrap();
        for (dev, target) in [("254:0", "vda"), ("254:1", "vda/vda1")] {
            let link = format!("../../devices/virtio1/block/{target}");
            std::os::unix::fs::symlink(link, d.join("sys/dev/block").join(dev)).unwrap();
        }
        std::os::unix::fs::symlink("../../../virtio1", d.join("sys/devices/virtio1/block/vda/device")).unwrap();
        let want = Queue {
            vm: vec![("max_sectors_kb", 4096), ("max_segments", 254)],
            nr_requests: Some(256),
            wbt_lat_usec: None,
            write_cache: None,
            scheduler: Some("mq-deadline".into()),
            iosched: vec![("writes_starved", 2), ("fifo_batch", 16)],
            ring: Some(256),
            loop_dio: false,
        };
        assert_eq!(queue(&d, "254:0").unwrap().as_ref(), Some(&want));
        assert_eq!(queue(&d, "254:1").unwrap().as_ref(), Some(&want), "a partition has its disk's queue");
        assert_eq!(want.sets(), ["vm.max_sectors_kb=4096", "vm.max_segments=254"]);
        assert_eq!(
            want.summary("254:0"),
            "254:0: max_sectors_kb 4096, max_segments 254 (vm.*), a virtio ring of 256 descriptors \
             (disk.*.ring_descriptors); writeback throttle: nr_requests 256, wbt_lat_usec ?, write_cache ? \
             (disk.*); scheduler mq-deadline, writes_starved 2, fifo_batch 16 (disk.*)"
        );
        assert_eq!(
            want.disk_sets(&["vda".into()]),
            [
                "disk.vda.ring_descriptors=256",
                "disk.vda.nr_requests=256",
                "disk.vda.scheduler=\"mq-deadline\"",
                "disk.vda.writes_starved=2",
                "disk.vda.fifo_batch=16"
            ]
        );
        assert_eq!(want.disk_sets(&[])[..2], ["disk.sda.ring_descriptors=256", "disk.sda.nr_requests=256"]);
        let bfq = Queue { scheduler: Some("bfq".into()), iosched: vec![], ..want.clone() };
        assert!(bfq.summary("254:0").ends_with("not modelled: scheduler bfq"), "{}", bfq.summary("254:0"));
        assert_eq!(bfq.disk_sets(&[]).len(), 2, "no scheduler set for bfq");
        assert_eq!(queue(&d, "7:0").unwrap(), None, "loop0 is not linked: no such device");
        std::fs::create_dir_all(d.join("sys/devices/virtual/block/loop0/loop")).unwrap();
        std::fs::write(d.join("sys/devices/virtual/block/loop0/loop/dio"), "1\n").unwrap();
        std::os::unix::fs::symlink("../../devices/virtual/block/loop0", d.join("sys/dev/block/7:0")).unwrap();
        assert!(queue(&d, "7:0").unwrap().unwrap().loop_dio, "a loop device with direct I/O: its worker");
        assert!(!queue(&d, "254:0").unwrap().unwrap().loop_dio);
        std::fs::write(d.join("sys/devices/virtio1/block/vda/queue/scheduler"), "none\n").unwrap();
        std::fs::write(d.join("sys/devices/virtio1/block/vda/queue/max_segments"), "x\n").unwrap();
        assert!(queue(&d, "254:0").unwrap_err().contains("max_segments"), "bad input is an error");
        std::fs::write(d.join("sys/devices/virtio1/block/vda/queue/max_segments"), "128\n").unwrap();
        let none = queue(&d, "254:1").unwrap().unwrap();
        assert_eq!((none.scheduler.as_deref(), none.iosched.len()), (Some("none"), 0), "iosched/ is mq-deadline's");
        let _ = std::fs::remove_dir_all(&d);
    }
}
