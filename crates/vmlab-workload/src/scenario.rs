//! The scenario file (TOML): machine, disks, swap, files and processes. Deserialised with
//! `deny_unknown_fields` so a misspelt key is an error (with the nearest valid name, see `error.rs`).
//! Sizes and durations are strings with units ("2GiB", "24MB/s", "8ms") parsed by `units.rs`.

use serde::{Deserialize, Serialize};

use crate::ast::{Span, Stmt};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Short name used in reports; defaults to the file stem.
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Kernel profile, e.g. "linux-6.8" (see `vmlab profiles`).
    pub profile: Option<String>,
    /// PRNG seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop the simulation at this simulated time even if processes still run ("600s").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub duration: Option<String>,
    /// After every process has exited or sleeps forever, keep simulating this long (kswapd may
    /// still be busy: seed 000 measures exactly that). Default "0s".
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub linger: Option<String>,
    /// Timeline sampling interval ("1s").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub interval: Option<String>,
    pub machine: MachineSpec,
    #[serde(default, rename = "disk")]
    pub disks: Vec<DiskSpec>,
    pub swap: Option<SwapSpec>,
    #[serde(default, rename = "file")]
    pub files: Vec<FileSpec>,
    #[serde(default, rename = "filetree")]
    pub filetrees: Vec<FileTreeSpec>,
    #[serde(default, rename = "process")]
    pub processes: Vec<ProcessSpec>,
    /// Memory cgroups (2.6.25+ profiles): `[[cgroup]] name = "job"` with v1 `limit_in_bytes`,
    /// `memsw.limit_in_bytes` or v2 `memory.max`/`high`/`low`/`min`/`memory.swap.max`.
    #[serde(default, rename = "cgroup")]
    pub cgroups: Vec<CgroupSpec>,
    /// Tunables and mechanism switches overriding the profile: `[vm] swappiness = 100`.
    #[serde(default)]
    pub vm: toml::Table,
    /// Mechanism choices overriding the profile: `[reclaim] unevictable_lru = true`.
    #[serde(default)]
    pub reclaim: toml::Table,
    /// Atomic high-order allocation sources (network receive into SLUB), seed 001.
    #[serde(default, rename = "netrx")]
    pub netrx: Vec<NetRxSpec>,
    /// Long-lived kernel allocations no program makes (driver pools, pipe buffers, vmalloc,
    /// kmalloc'd state): `[[kmem]] size = "80MiB" lifetime = "24h"`, optionally `object = 512`.
    #[serde(default, rename = "kmem")]
    pub kmem: Vec<KmemSpec>,
    /// Filesystem metadata: slab objects every created file costs (`[fs] inode_size = 800`).
    pub fs: Option<FsSpec>,
    /// SLUB boot parameters (`[slub] max_order = 1`): `slub_max_order`, `slub_min_objects`,
    /// `slub_min_order`.
    pub slub: Option<SlubSpec>,
    /// Kernel memory of every task (`[fork] thread_size = "8KiB"`, `task_struct = 5952`): what
    /// `dup_task_struct` allocates at fork and `free_task` gives back at exit.
    pub fork: Option<ForkSpec>,
    /// Program variables defined in every process (`[vars] threads = 4`, `len = "1GiB"`), so one
    /// scenario can be run at several settings with `--set vars.threads=16`.
    #[serde(default)]
    pub vars: toml::Table,
}

/// Quantities are strings with units, but a bare TOML integer (`memory = 2147483648`, or
/// `--set machine.memory=4096`, which parses as an integer) is accepted and kept as its decimal
/// text, so `units.rs` sees one form.
fn string_or_int<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum StrOrInt {
        S(String),
        I(i64),
    }
    match StrOrInt::deserialize(d) {
        Ok(StrOrInt::S(s)) => Ok(s),
        Ok(StrOrInt::I(i)) => Ok(i.to_string()),
        Err(_) => {
            Err(serde::de::Error::custom("expected a string with units (like \"2GiB\" or \"10ms\") or an integer"))
        }
    }
}

fn opt_string_or_int<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string_or_int(d).map(Some)
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    /// Physical memory ("2GiB").
    #[serde(deserialize_with = "string_or_int")]
    pub memory: String,
    /// Total CPUs (spread evenly over nodes).
    #[serde(default = "one")]
    pub cpus: u32,
    #[serde(default = "one")]
    pub nodes: u32,
    /// "x86_64" (DMA 16 MiB, DMA32 to 4 GiB, Normal above) or "i386" (DMA, Normal to 896 MiB, HighMem).
    #[serde(default = "default_arch")]
    pub arch: String,
    /// CPU clock in MHz: kernel work costs scale with 3000/cpu_mhz.
    #[serde(default = "default_mhz")]
    pub cpu_mhz: u32,
    /// Memory the firmware and kernel image keep (never on the free lists), default "0".
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub reserved: Option<String>,
    /// Memory below 16 MiB the kernel never frees, taken from 640 KiB up: the ISA hole
    /// (640 KiB–1 MiB) and the kernel image and bootmem bitmap reserved from 1 MiB. Default "0".
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub reserved_low: Option<String>,
    /// Inodes in use on the machine besides the scenario's files (`/proc/sys/fs/inode-nr`: the
    /// first figure less the second). 6.x's flusher counts each as a dirty page when it sizes
    /// reclaim's write-everything work (`get_nr_dirty_pages`). Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inodes_in_use: Option<u64>,
    /// Dirty page cache of the machine's other writers at the start ("44MB"): pages charged to
    /// no scenario group, on `foreign_disk`, written by that disk's flusher when the thresholds,
    /// their age or reclaim's `wakeup_flusher_threads` ask for it. Default 0.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub foreign_dirty: Option<String>,
    /// The disk that holds `foreign_dirty` (a `[[disk]]` name); default the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_disk: Option<String>,
    /// A virtual machine's free page reporting to its hypervisor (5.7+, mm/page_reporting.c):
    /// free blocks of this order and more are reported 2 s after such a free, and a frame's
    /// first CPU touch after that pays `machine.cost.reported_touch`. The guest's
    /// `/sys/module/page_reporting/parameters/page_reporting_order`; default none (real
    /// hardware reports nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_reporting_order: Option<u8>,
    /// The guest has been up a while: at the start every free block of `page_reporting_order`
    /// or more is already reported (and its frames discarded by the hypervisor), but for
    /// `unreported_small` and `unreported_large`. Default false (a machine just booted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_at_start: Option<bool>,
    /// With `reported_at_start`: free memory in blocks below the reporting order ("1GiB"), which
    /// no reporting pass takes (the fragments between what the machine's other users hold: the
    /// host's `/proc/buddyinfo` below that order). Default 0.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub unreported_small: Option<String>,
    /// With `reported_at_start`: free blocks of the reporting order or more not reported yet
    /// ("512MiB"), freed within the last pass interval — a set-up's files just written and
    /// dropped. The pass due 2 s into the run reports what is still free of them. Default 0.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub unreported_large: Option<String>,
    /// With `reported_at_start`: the free memory in reported blocks ("5GiB"); the machine then
    /// holds the rest of its memory, as its other users do, so that its free lists are the
    /// host's (a reporting pass takes a sixteenth of them). Default: all the rest is free.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub reported_free: Option<String>,
    /// Explicit zone sizes overriding the arch layout, e.g. { DMA = "16MiB", DMA32 = "3GiB", Normal = "1GiB" }.
    pub zones: Option<toml::Table>,
    /// Entries of the kernel cost table measured on the machine being modelled, as durations at
    /// its clock, e.g. { lru_scan = "240ns" }; the rest scale from 3 GHz with `cpu_mhz`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<toml::Table>,
}

fn one() -> u32 {
    1
}
fn default_arch() -> String {
    "x86_64".into()
}
fn default_mhz() -> u32 {
    3000
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub name: String,
    /// "hdd", "ssd", "nvme", "raid10", "san" (presets for the fields below).
    #[serde(default = "default_disk_model")]
    pub model: String,
    /// Sequential bandwidth of one spindle ("24MB/s").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub bandwidth: Option<String>,
    /// Average positioning time for a non-sequential request ("8ms").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub seek: Option<String>,
    /// Fixed per-request overhead ("100us").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub latency: Option<String>,
    /// Requests the device can have in flight (NCQ/TCQ depth).
    pub queue_depth: Option<u32>,
    /// Independent spindles (RAID members). Reads can be served by any mirror.
    pub spindles: Option<u32>,
    /// RAID chunk size ("64KiB").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub chunk: Option<String>,
    /// What all spindles together can move ("1GB/s"): the link they share. Default: no limit
    /// beyond `spindles` × `bandwidth`.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub device_bandwidth: Option<String>,
    /// One spindle's sequential write rate ("500MB/s"). Default: `bandwidth`.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub write_bandwidth: Option<String>,
    /// What writes move across the shared link ("1.4GB/s"). Default (and 0): `device_bandwidth`.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub device_write_bandwidth: Option<String>,
    /// Time from the end of a write's transfer to its completion, overlapped across the writes
    /// in flight ("2.5ms"): a stacked device's completion path. Default: none.
    #[serde(default, deserialize_with = "opt_string_or_int", skip_serializing_if = "Option::is_none")]
    pub write_completion_latency: Option<String>,
    /// A virtio disk without indirect descriptors: its ring's descriptors, of which a request
    /// takes one per data segment plus two (6.8's blk-mq only). Default: no ring bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_descriptors: Option<u32>,
    /// The queue's `nr_requests` (6.8's blk-mq only; the writeback throttle's queue depth).
    /// Default: twice the device's depth, at most 256, as with an I/O scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    /// The queue's `wbt_lat_usec` (6.8's blk-mq only; 0 turns the writeback throttle off).
    /// Default: 75000 for a disk that seeks, 2000 for the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbt_lat_usec: Option<u64>,
    /// A volatile write cache (`queue/write_cache` "write back"; 6.8's blk-mq only): the
    /// writeback throttle then lets a waiting flusher go only when no write is left in flight.
    /// Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<bool>,
    /// The queue's I/O scheduler (`queue/scheduler`; 6.8's blk-mq only): "none" dispatches in
    /// arrival order, "mq-deadline" holds writes while the device is full and lets reads go
    /// first. Default: "none".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// mq-deadline's `iosched/writes_starved` (default 2) and `iosched/fifo_batch` (default 16);
    /// ignored under "none".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_starved: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifo_batch: Option<u32>,
    /// The driver's interrupt handler, as the flat profile names it (default `disk_irq`).
    pub irq: Option<String>,
    /// Its file system reads regular files into large folios (`mapping_set_large_folios`: XFS
    /// since 5.18, ext4 since 6.16 unless mounted data=journal). Default: single pages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub large_folios: bool,
    /// Pages of one file's contiguous writeback that end their writeback together, once the
    /// last of their requests has completed: ext4's io_end with `dioread_nolock` (up to
    /// `MAX_WRITEPAGES_EXTENT_LEN` 2,048 blocks). Default 0: each request's pages end with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_end_pages: Option<u32>,
    /// A loop device (drivers/block/loop.c, 5.15+): its write requests wait for the device's
    /// kworker, which runs on a CPU when one is queued and submits them to the backing device
    /// (this disk's model). Default: the requests go to the device at once. Needs 6.x's queue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loop_worker: bool,
    /// Requests a 2.4 driver takes off its request queue at once (kernels before blk-mq): an
    /// IDE drive 1 (`ide_do_request`: one active request per hwgroup), a SCSI disk its
    /// commands (`scsi_request_fn`). The rest stay listed, where the elevator places and merges
    /// around them, until the driver takes them. Default 0: the device takes every request as
    /// it is made (or as the plug ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_depth: Option<u32>,
}

fn default_disk_model() -> String {
    "hdd".into()
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwapSpec {
    #[serde(deserialize_with = "string_or_int")]
    pub size: String,
    /// Disk holding the swap area (default: the first disk).
    pub disk: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Name or pattern: "chunk{i}" with `count` gives chunk0..chunkN-1.
    pub name: String,
    #[serde(default = "one")]
    pub count: u32,
    /// Size in bytes ("427683520" or "408MiB"); an integer is accepted too.
    pub size: toml::Value,
    /// Disk holding the file (default: the first disk).
    pub disk: Option<String>,
}

/// A generated directory tree: `count` files named `name{i}` whose sizes follow a log-normal
/// spread with the given total and mean (seed 004's /usr/bin).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileTreeSpec {
    pub name: String,
    #[serde(deserialize_with = "string_or_int")]
    pub total: String,
    #[serde(deserialize_with = "string_or_int")]
    pub mean: String,
    /// Log-normal sigma (spread), default 1.2.
    pub sigma: Option<f64>,
    pub disk: Option<String>,
    /// Files back to back on the disk, as a filesystem places small files written one after
    /// another (false: each file starts a 1 MiB-aligned extent).
    #[serde(default)]
    pub packed: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSpec {
    pub name: String,
    /// Start this many identical processes (names get a ".N" suffix when > 1).
    #[serde(default = "one")]
    pub count: u32,
    /// Start time ("0s").
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub start: Option<String>,
    /// CPU to bind to at start (default: any).
    pub cpu: Option<u32>,
    /// RLIMIT_MEMLOCK ("1GiB"); default unlimited (a root process).
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub memlock: Option<String>,
    /// The memory cgroup (a `[[cgroup]]` name) the process runs in; default the root.
    pub cgroup: Option<String>,
    /// Program text (see docs/SCENARIOS.md). A plain `String`, not `Spanned`: `--set` edits
    /// the parsed table before deserialisation, and spans can't survive that; `load.rs` finds
    /// the program's position in the file itself (`ProcessDef::program` holds the parsed AST).
    pub program: String,
}

/// A memory cgroup. Sizes take units or "max"; the v1 and v2 files cannot be mixed in one group.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupSpec {
    pub name: String,
    /// Parent group's name (default: a child of the root).
    pub parent: Option<String>,
    /// v1 `memory.limit_in_bytes`.
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub limit_in_bytes: Option<String>,
    /// v1 `memory.memsw.limit_in_bytes` (`memsw.limit_in_bytes = "1GiB"`).
    pub memsw: Option<MemswSpec>,
    /// v2 `memory.max`, `memory.high`, `memory.low`, `memory.min`, `memory.swap.max`.
    pub memory: Option<MemoryV2Spec>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemswSpec {
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub limit_in_bytes: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryV2Spec {
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub max: Option<String>,
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub high: Option<String>,
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub low: Option<String>,
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub min: Option<String>,
    pub swap: Option<SwapMaxSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwapMaxSpec {
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub max: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetRxSpec {
    /// Allocations per simulated second ("2000/s" or an integer).
    pub rate: toml::Value,
    /// Buddy order of each allocation (SLUB slab of order 3 = 32 KiB).
    #[serde(default = "three")]
    pub order: u32,
    /// How long each allocation lives before it is freed ("50ms").
    #[serde(deserialize_with = "string_or_int")]
    pub lifetime: String,
    /// Node whose CPUs take the interrupts (default 0).
    #[serde(default)]
    pub node: u32,
    /// Object size ("4KiB"): objects share slabs of `order` (a kmalloc cache) and a slab is
    /// freed with its last object. Default: every allocation is a slab of its own.
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub object: Option<String>,
    /// "fixed" (default) or "exponential" (mean `lifetime`).
    #[serde(default)]
    pub lifetime_dist: Option<String>,
    /// Bursty traffic: `rate` during `on` ("2s"), silence during `off` ("8s"), repeating.
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub on: Option<String>,
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub off: Option<String>,
    /// The socket reader's rate ("2500/s"): packets are freed in arrival order no faster than this.
    #[serde(default)]
    pub drain: Option<toml::Value>,
    /// The link's MTU (1500): every packet is an skb as `__alloc_skb` makes it, a head from
    /// `skbuff_head_cache` and its data from the kmalloc cache of the receive buffer's size,
    /// slab orders from `calculate_order` (`order` and `object` are then not used).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// Share of packets (0 to 1) whose socket belongs to a slow reader (an IMAP client on a
    /// slow link): such a packet stays queued for `slow_lifetime` (exponential mean) instead
    /// of `lifetime`, pinning its slab meanwhile.
    #[serde(default)]
    pub slow_share: Option<f64>,
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub slow_lifetime: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KmemSpec {
    /// What the population stands for (reports only).
    #[serde(default)]
    pub name: Option<String>,
    /// Memory held in the steady state ("80MiB"): whole pages, or objects of `object` bytes.
    #[serde(deserialize_with = "string_or_int")]
    pub size: String,
    /// Mean lifetime of one allocation ("24h"; exponential): the population turns over at
    /// size / lifetime.
    #[serde(deserialize_with = "string_or_int")]
    pub lifetime: String,
    /// Object size ("512"): kmalloc objects of this size class, whose slabs are unreclaimable
    /// slab. Default: order-0 pages in no meminfo field.
    #[serde(default, deserialize_with = "opt_string_or_int")]
    pub object: Option<String>,
}

/// SLUB's boot parameters, 2.6.36 names without the `slub_` prefix.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlubSpec {
    #[serde(default = "three")]
    pub max_order: u32,
    #[serde(default)]
    pub min_objects: u32,
    #[serde(default)]
    pub min_order: u32,
}

/// The filesystem's metadata caches: object sizes in bytes of its inode cache (e.g.
/// ext3_inode_cache) and of the dentry cache. Every file a program creates then holds one of
/// each until it is deleted or the slab shrinkers prune them (see dcache.rs).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsSpec {
    pub inode_size: u32,
    #[serde(default = "dentry_size")]
    pub dentry_size: u32,
}

/// `dup_task_struct`'s allocations: the kernel stack (`THREAD_SIZE`, whole pages) and the
/// `task_struct` object (bytes, from its SLUB cache).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForkSpec {
    #[serde(deserialize_with = "string_or_int")]
    pub thread_size: String,
    pub task_struct: u32,
}

fn dentry_size() -> u32 {
    192
}

fn three() -> u32 {
    3
}

/// A parsed process: the spec plus its program.
#[derive(Clone, Debug)]
pub struct ProcessDef {
    pub name: String,
    pub count: u32,
    pub start_ns: u64,
    pub cpu: Option<u32>,
    /// RLIMIT_MEMLOCK in pages (u64::MAX: unlimited).
    pub memlock_limit: u64,
    /// Index into `Setup::cgroups` of the group the process runs in (None: the root).
    pub cgroup: Option<usize>,
    pub program: Vec<Stmt>,
    pub span: Span,
}

/// The scenario's machine, devices and sources with every quantity resolved (bytes, ns, per
/// second) and checked, once, by the loader — so the simulator builds the machine from numbers
/// and a bad value is reported at its position in the file (or its `--set`).
#[derive(Clone, Debug)]
pub struct Setup {
    pub duration_ns: Option<u64>,
    pub linger_ns: Option<u64>,
    pub interval_ns: Option<u64>,
    pub machine: MachineSetup,
    pub disks: Vec<DiskSetup>,
    pub swap: Option<SwapSetup>,
    pub files: Vec<FileSetup>,
    pub filetrees: Vec<FileTreeSetup>,
    pub netrx: Vec<NetRxSetup>,
    pub kmem: Vec<KmemSetup>,
    /// Slab object sizes of the inode and dentry caches, bytes.
    pub fs: Option<(u32, u32)>,
    /// `[fork]`: (kernel stack order, task_struct bytes).
    pub fork: Option<(u32, u32)>,
    /// `[slub]`: (max_order, min_objects, min_order); None: the kernel's defaults.
    pub slub: Option<(u32, u32, u32)>,
    /// Memory cgroups, parents before children.
    pub cgroups: Vec<CgroupSetup>,
}

/// A memory cgroup's limits in bytes (None: "max" / not set).
#[derive(Clone, Debug)]
pub struct CgroupSetup {
    pub name: String,
    /// Index of the parent in `Setup::cgroups` (None: the root).
    pub parent: Option<usize>,
    /// Configured through the v1 files (`limit_in_bytes`), else v2.
    pub v1: bool,
    pub max: Option<u64>,
    pub high: Option<u64>,
    pub low: Option<u64>,
    pub min: Option<u64>,
    pub swap_max: Option<u64>,
    pub memsw_max: Option<u64>,
    /// The group's `name` in the file, for errors the simulator finds (a profile without memcg).
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneName {
    Dma,
    Dma32,
    Normal,
    HighMem,
}

#[derive(Clone, Debug)]
pub struct MachineSetup {
    pub memory_bytes: u64,
    pub cpus: u32,
    pub nodes: u32,
    pub arch: String,
    pub cpu_mhz: u32,
    pub reserved_bytes: u64,
    pub reserved_low_bytes: u64,
    /// `machine.inodes_in_use`.
    pub inodes_in_use: u64,
    /// `machine.foreign_dirty` in bytes, and the disk that holds them.
    pub foreign_dirty_bytes: u64,
    pub foreign_disk: usize,
    /// `machine.page_reporting_order` (below `MAX_ORDER`).
    pub page_reporting_order: Option<u8>,
    /// `machine.reported_at_start`: the unreported small and large free bytes and the reported
    /// free bytes (all the rest when none), when set.
    pub reported_at_start: Option<(u64, u64, Option<u64>)>,
    /// Explicit zone sizes in bytes, in the file's order.
    pub zones: Option<Vec<(ZoneName, u64)>>,
    /// Cost-table entries measured on the machine, ns.
    pub cost: Vec<(String, u64)>,
}

#[derive(Clone, Debug)]
pub struct DiskSetup {
    pub name: String,
    pub model: String,
    pub bandwidth_bps: Option<u64>,
    pub seek_ns: Option<u64>,
    pub latency_ns: Option<u64>,
    pub queue_depth: Option<u32>,
    pub spindles: Option<u32>,
    pub chunk_bytes: Option<u64>,
    pub device_bandwidth_bps: Option<u64>,
    pub write_bandwidth_bps: Option<u64>,
    pub device_write_bandwidth_bps: Option<u64>,
    pub write_completion_latency_ns: Option<u64>,
    pub ring_descriptors: Option<u32>,
    pub nr_requests: Option<u32>,
    pub wbt_lat_usec: Option<u64>,
    pub write_cache: Option<bool>,
    /// mq-deadline's `writes_starved` and `fifo_batch`; None: the `none` scheduler.
    pub deadline: Option<(u32, u32)>,
    pub irq: Option<String>,
    pub large_folios: bool,
    /// 0: per request.
    pub io_end_pages: u32,
    /// A loop device's worker in front of the device (`DiskSpec::loop_worker`).
    pub loop_worker: bool,
    /// 0: no list; the device takes every request as it is made.
    pub driver_depth: u32,
    /// The disk's `name` in the file, for errors the device model finds.
    pub span: Span,
}

/// Disks are numbered in file order; 0 is the first (or the default disk without [[disk]]).
#[derive(Clone, Debug)]
pub struct SwapSetup {
    pub bytes: u64,
    pub disk: usize,
}

#[derive(Clone, Debug)]
pub struct FileSetup {
    pub name: String,
    pub count: u32,
    pub bytes: u64,
    pub disk: usize,
}

#[derive(Clone, Debug)]
pub struct FileTreeSetup {
    pub name: String,
    pub total_bytes: u64,
    pub mean_bytes: u64,
    pub sigma: f64,
    pub disk: usize,
    pub packed: bool,
}

/// `[[kmem]]` resolved: objects alive in the steady state, their mean lifetime, their size
/// (None: whole pages).
#[derive(Clone, Debug)]
pub struct KmemSetup {
    pub population: u64,
    pub lifetime_ns: u64,
    pub object_bytes: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct NetRxSetup {
    /// Allocations per second (0: the source is off).
    pub rate: u64,
    /// (share in parts per million, mean lifetime ns) of packets held by slow readers.
    pub slow: Option<(u32, u64)>,
    pub order: u32,
    pub lifetime_ns: u64,
    pub exponential: bool,
    pub node: u32,
    pub object_bytes: Option<u64>,
    /// Bursts: (on, off) ns.
    pub on_off: Option<(u64, u64)>,
    pub drain: Option<u64>,
    /// skb receive with this MTU (see `NetRxSpec::mtu`).
    pub mtu: Option<u32>,
}
