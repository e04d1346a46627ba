//! A simulation run: build the machine and kernel from a scenario and a profile, start the
//! processes and kernel threads, run the event loop, and report in the kernel's formats.

use std::collections::BTreeMap;

use rand::RngCore;
use rustc_hash::FxHashMap;

use crate::disk::{Disk, DiskParams};
use crate::kernel::{Ctx, Kernel};
use crate::machine::{MachineConfig, ZoneLayout};
use crate::mmzone::{
    ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::profiles::{self, Profile, QuicklistRule};
use crate::sched::{Event, Outcome, SampleState, Sched, TState, TaskKind};
use crate::stats::meminfo::Meminfo;
use crate::stats::report::{self, Machine, RunReport, TaskCpu};
use crate::stats::timeline::Sample;
use crate::stats::vmstat::Vm;
use crate::workload::interp::{self, ProgState, Program};
use crate::workload::load::{self, Scenario};
use crate::workload::scenario::ZoneName;

/// Events between two progress reports: often enough for a tenth-of-a-second display at the
/// simulator's event rate, rarely enough that the call is nothing next to the events.
/// A multiple of `INTERRUPT_EVENTS`.
pub const PROGRESS_EVENTS: u32 = 1 << 14;

/// Events between two looks at the interrupt flag: a ^C is seen within a millisecond of wall time.
const INTERRUPT_EVENTS: u32 = 1 << 12;

/// A run failed because of the scenario (a runtime error in a program, a bad machine).
pub type SimError = crate::workload::exec::RunError;

/// One zone in a buddy sample: (free pages, free pages in order >= 3 blocks, `nr_free` by order).
pub type BuddySample = (u64, u64, [u64; crate::mmzone::MAX_ORDER]);

/// See `Sim::on_sample`.
pub type SampleHook = Box<dyn FnMut(&mut Sim)>;

pub struct Sim {
    pub k: Kernel,
    pub s: Sched,
    pub programs: Vec<std::sync::Arc<Program>>,
    pub queues: FxHashMap<(u32, String), i64>,
    pub metrics: Vec<(String, f64)>,
    pub error: Option<SimError>,
    pub user_alive: u32,
    pub user_forever: u32,
    pub workload_end: Option<u64>,
    pub end_limit: u64,
    pub linger: u64,
    pub interval: u64,
    pub samples: Vec<Sample>,
    /// Per sample, per zone: free pages and free pages in blocks of order >= 3 (buddyinfo), the
    /// validation hook for high-order reclaim (how fragmented free memory is).
    /// Per zone at each sample: free pages, free pages in blocks of order >= 3, free blocks by order.
    pub buddy_samples: Vec<(f64, Vec<BuddySample>)>,
    pub sstate: SampleState,
    pub scenario_name: String,
    pub seed: u64,
    pub params: Vec<(String, serde_json::Value)>,
    /// Called with the simulated time now and then (progress reporting): every
    /// `PROGRESS_EVENTS` events, so the check costs a counter test per event.
    pub progress: Option<crate::api::ProgressFn>,
    /// The scenario's own `duration`, when it has one: the end a progress report can count to.
    pub duration_ns: Option<u64>,
    /// Set (by a signal handler) to end the run early, as `duration` would: what was simulated
    /// so far is reported, with `params.interrupted_at_s`.
    pub interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// Called after each timeline sample, to follow state the timeline does not show (and, by
    /// lowering `end_limit`, to stop a run once what it measures has settled).
    pub on_sample: Option<SampleHook>,
    /// `[[netrx]]` sources: atomic slab allocations from network receive.
    pub netrx: Vec<crate::slub::NetRx>,
    /// `[[kmem]]` sources: long-lived kernel allocations.
    pub kmem: Vec<crate::kmem::KmemSource>,
    /// The scenario's disks by name (`create FILE disk=NAME`).
    pub disk_ids: BTreeMap<String, usize>,
    cpu_idle: Vec<bool>,
    /// An IdleTick is pending for this CPU.
    idle_tick_armed: Vec<bool>,
}

/// Give each disk its writeback context: with per-bdi flushers every disk but the first gets
/// one of its own, except a disk that holds only the swap area (no inode of its own to write;
/// swap writes go out from reclaim). Without them the first serves every disk.
fn assign_flushers(k: &mut Kernel, setup: &crate::workload::scenario::Setup) {
    if !k.profile.per_bdi_flusher {
        return;
    }
    let holds_files = |d: usize| {
        setup.files.iter().any(|f| f.disk == d)
            || setup.filetrees.iter().any(|t| t.disk == d)
            || (setup.machine.foreign_dirty_bytes > 0 && setup.machine.foreign_disk == d)
    };
    let swap_only = |d: usize| setup.swap.as_ref().is_some_and(|s| s.disk == d) && !holds_files(d);
    k.disk_wb = vec![0; k.disks.len()];
    for d in 1..k.disks.len() {
        if !swap_only(d) {
            k.disk_wb[d] = k.wbs.len();
            k.wbs.push(Default::default());
        }
    }
}

/// The scenario's `[[cgroup]]`s as the kernel's groups (id = index + 1; the root is 0), refused
/// at the group's name by a profile whose era or engine has no memory cgroups.
fn build_cgroups(k: &mut Kernel, cgroups: &[crate::workload::scenario::CgroupSetup]) -> Result<(), SimError> {
    use crate::memcontrol::{CgroupApi, MemCgroup, MemcgLimits, MAX_GROUPS, UNLIMITED};
    let Some(first) = cgroups.first() else { return Ok(()) };
    let refuse = |message: String| SimError { span: Some(first.span), message };
    if !k.profile.memcg {
        return Err(refuse(format!(
            "profile {} has no memory cgroups (CONFIG_MEMCG came with 2.6.25): remove the [[cgroup]]s",
            k.profile.name
        )));
    }
    if !crate::vmscan::has_memcg_reclaim(&k.profile) {
        return Err(refuse(format!(
            "profile {}'s reclaim engine keeps no per-cgroup LRU lists in vmlab: [[cgroup]] needs linux-6.8",
            k.profile.name
        )));
    }
    if cgroups.len() > MAX_GROUPS {
        return Err(refuse(format!("{} cgroups: vmlab models at most {MAX_GROUPS}", cgroups.len())));
    }
    let pages = |b: Option<u64>| b.map_or(UNLIMITED, |b| b / 4096);
    let (nodes, zones) = (k.nodes.len(), k.zones.len());
    for c in cgroups {
        let limits = MemcgLimits {
            max: pages(c.max),
            high: pages(c.high),
            low: c.low.map_or(0, |b| b / 4096),
            min: c.min.map_or(0, |b| b / 4096),
            swap_max: pages(c.swap_max),
            memsw_max: pages(c.memsw_max),
        };
        let api = if c.v1 { CgroupApi::V1 } else { CgroupApi::V2 };
        let parent = c.parent.map_or(crate::memcontrol::ROOT, |p| (p + 1) as u8);
        k.memcg.groups.push(MemCgroup::new(&c.name, parent, api, limits, nodes, zones));
    }
    Ok(())
}

/// Resolve the profile: the scenario's (or the override), then `[vm]`/`[reclaim]` tables (with
/// the `--set`s applied). Each knob is checked against the final profile: its range in the row's
/// release, and, once every knob is in (`reclaim.engine` may be one), whether the engine reads
/// it. Errors point at the `--set` or the file line that wrote the knob.
pub fn resolve_profile(sc: &Scenario, override_name: Option<&str>) -> Result<Profile, SimError> {
    use crate::workload::load::Part;
    let at = |path: &[&str], part: Part, message: String| SimError { span: sc.span_of(path, part), message };
    let name = override_name.or(sc.file.profile.as_deref()).unwrap_or(profiles::DEFAULT_PROFILE);
    let mut p = profiles::find(name).ok_or_else(|| {
        let hint = profiles::suggest_name(name).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        let msg = format!("unknown profile `{name}`{hint} (known profiles: {})", profiles::names().join(", "));
        match override_name {
            Some(_) => SimError::msg(msg),
            None => at(&["profile"], Part::Value, msg),
        }
    })?;
    let knobs = || {
        let vm = sc.file.vm.iter().map(|(k, v)| ("vm", k, v));
        vm.chain(sc.file.reclaim.iter().map(|(k, v)| ("reclaim", k, v)))
    };
    for (section, k, v) in knobs() {
        p.set(section, k, v).map_err(|e| {
            let part = if profiles::Section::parse(section).and_then(|s| profiles::knob(s, k)).is_some() {
                Part::Value
            } else {
                Part::Key
            };
            at(&[section, k], part, e)
        })?;
    }
    for (section, k, _) in knobs() {
        p.check_read(section, k).map_err(|e| at(&[section, k], Part::Key, e))?;
    }
    Ok(p)
}

impl Sim {
    pub fn new(sc: &Scenario, profile: Profile) -> Result<Sim, SimError> {
        use crate::workload::load::Part;
        // The machine's bounds are checked here, against the layout: point at the value that
        // crossed one (the zones when they are given, else the memory).
        let machine_at = |key: &'static str| {
            let key = if key == "memory" && sc.setup.machine.zones.is_some() { "zones" } else { key };
            move |message: String| SimError { span: sc.span_of(&["machine", key], Part::Value), message }
        };
        let f = &sc.file;
        let setup = &sc.setup;
        let m = &setup.machine;
        let zones = match &m.zones {
            Some(t) => {
                let mut v: Vec<ZoneLayout> = t
                    .iter()
                    .map(|&(name, bytes)| {
                        let kind = match name {
                            ZoneName::Dma => ZoneType::Dma,
                            ZoneName::Dma32 => ZoneType::Dma32,
                            ZoneName::Normal => ZoneType::Normal,
                            ZoneName::HighMem => ZoneType::HighMem,
                        };
                        ZoneLayout { kind, node: 0, pages: bytes / 4096, start_pfn: None }
                    })
                    .collect();
                v.sort_by_key(|z| z.kind);
                v
            }
            None => MachineConfig::layout(m.memory_bytes, m.nodes, &m.arch).map_err(|e| {
                let key = if e.contains("nodes") && !e.contains("per node") { "nodes" } else { "memory" };
                machine_at(key)(e)
            })?,
        };
        let cfg = MachineConfig {
            memory_bytes: zones.iter().map(|z| z.pages).sum::<u64>() * 4096,
            cpus: m.cpus,
            nodes: m.nodes.max(1),
            arch: m.arch.clone(),
            cpu_mhz: m.cpu_mhz,
            reserved_bytes: m.reserved_bytes,
            reserved_low_bytes: m.reserved_low_bytes,
            zones,
        };
        let ncpu = cfg.cpus as usize;
        let mut k = Kernel::new(profile, cfg, f.seed).map_err(machine_at("memory"))?;
        k.inodes_in_use = m.inodes_in_use;
        if let Some(order) = m.page_reporting_order {
            // mm/page_reporting.c came with 5.7's virtio-balloon free page reporting.
            if k.profile.version < crate::profiles::Version(5, 7, 0) {
                return Err(SimError {
                    span: sc.span_of(&["machine", "page_reporting_order"], Part::Value),
                    message: format!(
                        "machine.page_reporting_order: free page reporting came with 5.7; profile `{}` is {}",
                        k.profile.name, k.profile.version
                    ),
                });
            }
            k.page_reporting.register(order, 0);
        }
        for (name, ns) in &m.cost {
            let entry = k.cost.entry_mut(name).ok_or_else(|| SimError {
                span: sc.span_of(&["machine", "cost", name], Part::Key),
                message: format!("machine.cost: unknown entry `{name}`"),
            })?;
            *entry = *ns;
        }
        // Disks.
        let mut disk_ids: BTreeMap<String, usize> = BTreeMap::new();
        for d in &setup.disks {
            let mut p = DiskParams::preset(&d.model).ok_or_else(|| SimError {
                span: Some(d.span),
                message: format!("disk `{}`: unknown model `{}`", d.name, d.model),
            })?;
            if let Some(b) = d.bandwidth_bps {
                p.bandwidth_bps = b;
            }
            if let Some(s) = d.seek_ns {
                p.seek_ns = s;
            }
            if let Some(s) = d.latency_ns {
                p.latency_ns = s;
            }
            if let Some(q) = d.queue_depth {
                p.queue_depth = q;
            }
            if let Some(n) = d.spindles {
                p.spindles = n;
            }
            if let Some(c) = d.chunk_bytes {
                p.chunk_bytes = c;
            }
            if let Some(b) = d.device_bandwidth_bps {
                p.device_bandwidth_bps = b;
            }
            if let Some(b) = d.write_bandwidth_bps {
                p.write_bandwidth_bps = b;
            }
            if let Some(b) = d.device_write_bandwidth_bps {
                p.device_write_bandwidth_bps = b;
            }
            if let Some(t) = d.write_completion_latency_ns {
                p.write_completion_latency_ns = t;
            }
            let mut disk = Disk::new(p)
                .map_err(|e| SimError { span: Some(d.span), message: format!("disk `{}`: {e}", d.name) })?;
            disk.set_ring(d.ring_descriptors.unwrap_or(0));
            if d.large_folios && !crate::vmscan::has_large_folios(&k.profile) {
                return Err(SimError {
                    span: Some(d.span),
                    message: format!(
                        "disk `{}`: large_folios needs a kernel whose reclaim takes large page-cache folios (5.18+); profile `{}` reads single pages",
                        d.name, k.profile.name
                    ),
                });
            }
            disk.large_folios = d.large_folios;
            disk.io_end_pages = d.io_end_pages;
            if d.loop_worker && (!k.profile.blk_mq || d.deadline.is_some()) {
                return Err(SimError {
                    span: Some(d.span),
                    message: format!(
                        "disk `{}`: loop_worker needs a kernel with blk-mq and the `none` scheduler (a loop device's own, 5.15+); profile `{}`{}",
                        d.name,
                        k.profile.name,
                        if k.profile.blk_mq { " has it, but the disk's scheduler is mq-deadline" } else { " has no blk-mq" }
                    ),
                });
            }
            disk.loop_worker = d.loop_worker;
            disk.set_elevator(
                d.deadline.map(|(writes_starved, fifo_batch)| crate::mq_deadline::DeadlineParams {
                    writes_starved,
                    fifo_batch,
                }),
            );
            disk.set_wbt_params(crate::disk::WbtParams {
                nr_requests: d.nr_requests,
                lat_us: d.wbt_lat_usec,
                write_cache: d.write_cache.unwrap_or(false),
            });
            disk_ids.insert(d.name.clone(), k.disks.len());
            k.disks.push(disk);
            k.prof.irq.push(crate::stats::kfunc::IrqRow {
                name: d.irq.clone().unwrap_or_else(|| DISK_IRQ.to_string()),
                ..Default::default()
            });
        }
        if k.disks.is_empty() {
            k.disks.push(Disk::preset("hdd").ok_or_else(|| SimError::msg("no `hdd` disk preset".to_string()))?);
            disk_ids.insert("sda".into(), 0);
            k.prof.irq.push(crate::stats::kfunc::IrqRow { name: DISK_IRQ.to_string(), ..Default::default() });
        }
        if k.profile.blk_mq {
            let t = &k.profile.tunables;
            let (sectors_kb, segments) = (t.max_sectors_kb, t.max_segments);
            for d in &mut k.disks {
                d.set_queue(sectors_kb, segments);
            }
        }
        if k.profile.max_queue_sectors_kb > 0 && !k.profile.blk_mq {
            // blk_init_free_list: half the sectors on a box of under 30 MiB.
            let megs = k.total_pages() >> (20 - 12);
            let half = (megs < 30) as u32;
            let max = (k.profile.max_queue_sectors_kb << 10) >> half;
            for d in &mut k.disks {
                d.set_throttle_sectors(max, crate::ll_rw_blk::MAX_NR_REQUESTS >> half);
            }
        } else if k.profile.max_queue_requests > 0 && !k.profile.blk_mq {
            // blk_dev_init: half the requests unless more than 32 MB are free at boot.
            let free_kb = k.nr_free_pages() << 2;
            let nr = k.profile.max_queue_requests >> (free_kb <= 32 << 10) as u32;
            for d in &mut k.disks {
                d.set_throttle_requests(nr);
            }
        }
        if k.profile.plug_empty_queue && !k.profile.blk_mq {
            let elv = k.profile.elevator_linus.then(|| crate::ll_rw_blk::ElevatorLinus {
                read_latency: i32::try_from(k.profile.elevator_read_latency).unwrap_or(i32::MAX),
                write_latency: i32::try_from(k.profile.elevator_write_latency).unwrap_or(i32::MAX),
            });
            for d in &mut k.disks {
                d.set_plugging(true);
                d.set_elevator_linus(elv);
            }
        }
        if !k.profile.blk_mq {
            for (d, ds) in k.disks.iter_mut().zip(&setup.disks) {
                d.set_driver_depth(ds.driver_depth);
            }
        }
        // `size = 0` is `swapoff -a`: no swap area at all.
        if let Some(sw) = setup.swap.as_ref().filter(|sw| sw.bytes >= 4096) {
            let base = k.disks[sw.disk].allocate_extent(sw.bytes);
            k.swap = Some(crate::swap_state::SwapInfo::new(sw.disk, base, sw.bytes));
        }
        for fs in &setup.files {
            for i in 0..fs.count {
                let name = fs.name.replace("{i}", &i.to_string());
                k.file_create(&name, fs.bytes, fs.disk, false);
            }
        }
        for (ti, t) in setup.filetrees.iter().enumerate() {
            let mut rng = crate::prandom::stream(f.seed, crate::prandom::Stream::FileTree, ti as u64);
            let sizes = crate::dist::file_tree_sizes(&mut rng, t.total_bytes, t.mean_bytes.max(1), t.sigma);
            for (i, s) in sizes.iter().enumerate() {
                let name = if t.name.contains("{i}") {
                    t.name.replace("{i}", &i.to_string())
                } else {
                    format!("{}{i}", t.name)
                };
                if t.packed {
                    k.file_create_packed(&name, *s, t.disk);
                } else {
                    k.file_create(&name, *s, t.disk, false);
                }
            }
        }
        build_cgroups(&mut k, &setup.cgroups)?;
        assign_flushers(&mut k, setup);
        if m.foreign_dirty_bytes >= 4096 {
            let file = k.file_create("foreign-dirty", m.foreign_dirty_bytes, m.foreign_disk, false);
            crate::page_writeback::dirty_foreign(&mut k, file)
                .map_err(|e| SimError::msg(format!("machine.foreign_dirty: {e}")))?;
        }
        if let Some((small, large, reported)) = m.reported_at_start {
            crate::page_reporting::settle_at_start(&mut k, small / 4096, large / 4096, reported.map(|b| b / 4096));
        }
        let mut s = Sched::new(ncpu);
        // Kernel threads.
        for n in 0..k.nodes.len() {
            let t = s.new_task(&format!("kswapd{n}"), TaskKind::Kswapd(n), None);
            s.tasks[t].node_allowed = Some(n);
            k.nodes[n].kswapd.task = t;
            k.nodes[n].kswapd.sleeping = true;
        }
        if crate::vmscan::has_kreclaimd(&k.profile) {
            let t = s.new_task("kreclaimd", TaskKind::Kreclaimd, None);
            crate::vmscan::set_kreclaimd_task(&mut k, t);
        }
        let fl_interval = k.profile.tunables.dirty_writeback_centisecs * 10_000_000;
        for w in 0..k.wbs.len() {
            let name = if w == 0 { "flush".to_string() } else { format!("flush-{w}") };
            let fl = s.new_task(&name, TaskKind::Flusher(w), None);
            k.wbs[w].task = fl;
            s.block(fl, Some(fl_interval.max(1_000_000)), false);
        }
        for d in 0..k.disks.len() {
            if k.disks[d].loop_worker {
                // The device's `loop%d` workqueue's kworker: unbound, asleep until a request comes.
                let t = s.new_task(&format!("kworker/loop{d}"), TaskKind::LoopWorker(d), None);
                s.block(t, None, false);
                k.loops.devs.resize_with(k.loops.devs.len().max(d + 1), Default::default);
                k.loops.devs[d].task = t;
            }
        }
        let mut programs = Vec::new();
        let mut sim_user = 0;
        for (pi, pd) in sc.processes.iter().enumerate() {
            let prog = interp::compile(&pd.program).map_err(|e| SimError { span: Some(e.span), message: e.message })?;
            let nvars = prog.nvars;
            programs.push(std::sync::Arc::new(prog));
            for c in 0..pd.count {
                let name = if pd.count > 1 { format!("{}.{c}", pd.name) } else { pd.name.clone() };
                let t = s.new_task(&name, TaskKind::User, None);
                let mut ps = ProgState::new(pi, nvars);
                ps.vars[interp::TID] = c as i64;
                ps.vars[interp::NR_CPUS] = m.cpus as i64;
                ps.vars[interp::NR_NODES] = m.nodes.max(1) as i64;
                s.tasks[t].prog = Some(Box::new(ps));
                s.tasks[t].cpu_allowed = pd.cpu.map(|c| c % m.cpus);
                s.tasks[t].memlock_limit = pd.memlock_limit;
                s.tasks[t].rng =
                    crate::prandom::stream(f.seed, crate::prandom::Stream::Process, ((pi as u64) << 32) | c as u64);
                s.tasks[t].memcg = pd.cgroup.map_or(crate::memcontrol::ROOT, |c| (c + 1) as u8);
                s.push(pd.start_ns, Event::Start(t));
                sim_user += 1;
            }
        }
        let interval = match setup.interval_ns {
            Some(i) => i.max(load::MIN_INTERVAL_NS),
            None => 1_000_000_000,
        };
        let end_limit = setup.duration_ns.unwrap_or(load::DEFAULT_DURATION_NS);
        let linger = setup.linger_ns.unwrap_or(0);
        let slub = match setup.slub {
            Some((max_order, min_objects, min_order)) => {
                crate::slub::SlubTunables { max_order, min_objects, min_order }
            }
            None => crate::slub::SlubTunables::default(),
        };
        if let Some((inode_size, dentry_size)) = setup.fs {
            k.vfs =
                Some(Box::new(crate::dcache::Vfs::new(dentry_size as u64, inode_size as u64, k.cfg.cpus as u64, slub)));
        }
        if let Some((stack_order, task_struct)) = setup.fork {
            k.task_mem =
                Some(Box::new(crate::fork::TaskMem::new(stack_order, task_struct as u64, k.cfg.cpus as u64, slub)));
        }
        let mut netrx = Vec::new();
        for n in &setup.netrx {
            if n.rate == 0 {
                continue;
            }
            let mut src = crate::slub::NetRx::new(n.rate, n.order, n.lifetime_ns, n.node as usize);
            src.exp_lifetime = n.exponential;
            src.slow = n.slow;
            if let Some(bytes) = n.object_bytes {
                src.object = bytes;
                src.cache = Some(Box::new(crate::slub::KmemCache::kmalloc_atomic(bytes, n.order)));
            }
            if let Some(mtu) = n.mtu {
                let cpus = k.cfg.cpus as u64;
                let data = crate::slub::skb_rx_data_bytes(mtu as u64);
                src.object = data;
                src.cache = Some(Box::new(crate::slub::KmemCache::kmalloc(data, cpus, slub)));
                src.head_cache =
                    Some(Box::new(crate::slub::KmemCache::kmalloc(crate::slub::SKB_HEAD_BYTES, cpus, slub)));
            }
            if let Some((on, off)) = n.on_off {
                src.on_ns = on;
                src.off_ns = off;
            }
            if let Some(d) = n.drain {
                src.drain = d;
            }
            let first = src.next_gap(&mut k);
            s.push(first, Event::NetRx(netrx.len()));
            netrx.push(src);
        }
        let mut kmem = Vec::new();
        for km in &setup.kmem {
            if km.population == 0 {
                continue;
            }
            let cache = km.object_bytes.map(|b| {
                let mut c = crate::slub::KmemCache::with_tunables(
                    "kmalloc",
                    b.next_power_of_two(),
                    k.cfg.cpus as u64,
                    crate::mmzone::Mt::Unmovable,
                    slub,
                );
                c.nowait = true;
                Box::new(c)
            });
            let src = crate::kmem::KmemSource::new(km.population, km.lifetime_ns, cache);
            s.push(0, Event::Kmem(kmem.len()));
            kmem.push(src);
        }
        let sstate = SampleState { last_ev: vec![0; Vm::COUNT], ..Default::default() };
        Ok(Sim {
            k,
            s,
            programs,
            queues: FxHashMap::default(),
            metrics: Vec::new(),
            error: None,
            user_alive: sim_user,
            user_forever: 0,
            workload_end: None,
            end_limit,
            linger,
            interval,
            samples: Vec::new(),
            buddy_samples: Vec::new(),
            sstate,
            // The file's name, not the path it was given by: the same scenario run from another
            // directory gives the same output.
            scenario_name: f.name.clone().unwrap_or_else(|| {
                std::path::Path::new(&sc.path)
                    .file_name()
                    .map_or_else(|| sc.path.clone(), |n| n.to_string_lossy().into_owned())
            }),
            seed: f.seed,
            params: Vec::new(),
            progress: None,
            interrupt: None,
            duration_ns: setup.duration_ns,
            on_sample: None,
            netrx,
            kmem,
            disk_ids,
            cpu_idle: vec![true; ncpu],
            idle_tick_armed: vec![false; ncpu],
        })
    }

    fn ctx_for(&self, cpu: u32, t: usize) -> Ctx {
        Ctx {
            cpu,
            node: self.k.cfg.node_of_cpu(cpu),
            task: t,
            now: self.s.now,
            mm: self.s.tasks[t].mm,
            ..Default::default()
        }
    }

    /// Run until the workload ends (plus linger) or the duration limit.
    pub fn run(&mut self) -> Result<(), SimError> {
        let mut events = 0u32;
        self.s.push(self.interval, Event::Sample);
        loop {
            self.drain_kernel_requests();
            self.dispatch();
            if let Some(e) = self.error.take() {
                return Err(e);
            }
            let Some(t) = self.s.peek_time() else { break };
            if t > self.end_limit {
                self.s.now = self.end_limit;
                break;
            }
            if let Some(we) = self.workload_end {
                if t > we.saturating_add(self.linger) {
                    self.s.now = we.saturating_add(self.linger);
                    break;
                }
            }
            let (t, ev) = self.s.pop().expect("peeked");
            self.s.now = t;
            self.k.now = t;
            // The worker's folio ends up to now, each at its instant, before anything at `t`.
            crate::ext4_page_io::catch_up(&mut self.k, t);
            self.handle(ev);
            events = events.wrapping_add(1);
            // Both checks are rare, so the common event pays one test.
            if events.is_multiple_of(INTERRUPT_EVENTS) {
                if self.interrupt.is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                    self.params.push(("interrupted_at_s".into(), serde_json::json!(t as f64 / 1e9)));
                    break;
                }
                if events.is_multiple_of(PROGRESS_EVENTS) {
                    if let Some(p) = self.progress.as_mut() {
                        p(t, self.duration_ns.map(|d| d.min(self.end_limit)));
                    }
                }
            }
        }
        if self.workload_end.is_none() {
            self.workload_end = Some(self.s.now);
        }
        Ok(())
    }

    /// A `BlkRun` for each disk whose scheduler holds writes that can go later.
    fn arm_blk_runs(&mut self) {
        for d in 0..self.k.disks.len() {
            if let Some(t) = self.k.disks[d].take_run() {
                self.s.push(t, Event::BlkRun(d));
            }
        }
    }

    /// The I/O the kernel started goes to the scheduler's queue, and the disks' schedulers get
    /// the `BlkRun`s their held writes need.
    fn queue_started_io(&mut self) {
        self.k.io_queue_first_write = u64::MAX;
        // Drained in place (and below): taking the vectors freed their buffers at every event
        // that had queued something, and the next push allocated them again.
        for (t, d) in self.k.io_queue.drain(..) {
            self.s.add_io(t, d);
        }
        self.arm_blk_runs();
    }

    /// Wake each task at its time; those still running the quantum in which they will block
    /// are handed back, for the next round.
    fn timed_wakes(&mut self, wakes: &[(u64, usize)]) -> Vec<(u64, usize)> {
        let mut later = Vec::new();
        for &(at, t) in wakes {
            match self.s.tasks[t].state {
                TState::Blocked => {
                    let g = self.s.tasks[t].gen;
                    self.s.push(at.max(self.s.now), Event::Wake(t, g));
                }
                TState::Running(_) if self.s.tasks[t].kind != TaskKind::User => self.s.tasks[t].wake_pending = true,
                TState::Running(_) => later.push((at, t)),
                _ => {}
            }
        }
        later
    }

    fn drain_kernel_requests(&mut self) {
        self.queue_started_io();
        for t in self.k.wakeups.drain(..) {
            self.s.wake(t);
        }
        for t in self.k.throttle_wakeups.drain(..) {
            self.s.throttle_wake(t);
        }
        // A loop worker woken at a request's issue time, or an `fsync` once the worker has
        // drained its list (`loop_dev`). A task still in the quantum that will block is woken
        // once it has blocked: a kthread's pending wake does that, a process's timed sleep
        // would ignore it, so its wake waits here for the next round.
        if !self.k.loops.wakes.is_empty() {
            let wakes = std::mem::take(&mut self.k.loops.wakes);
            self.k.loops.wakes = self.timed_wakes(&wakes);
        }
        // A reader asleep on a read a 2.4 queue listed, woken at its end once the driver took it.
        if !self.k.read_wakes.is_empty() {
            let wakes = std::mem::take(&mut self.k.read_wakes);
            self.k.read_wakes = self.timed_wakes(&wakes);
        }
        if let Some(t) = self.k.tcp.timer_due() {
            self.k.tcp.armed = Some(t);
            self.s.push(t, Event::TcpAck);
        }
        if let Some(t) = self.k.page_reporting.timer_due() {
            self.k.page_reporting.armed = Some(t);
            self.s.push(t, Event::PageReporting);
        }
        if !self.k.oom_killed.is_empty() {
            self.reap_oom_victims();
        }
    }

    fn dispatch(&mut self) {
        for cpu in 0..self.s.cpus.len() as u32 {
            if self.s.cpus[cpu as usize].running.is_some() || self.s.cpus[cpu as usize].busy_until > self.s.now {
                continue;
            }
            // Most events (packets, timers) find the run queue empty: no pick to try.
            let picked = if self.s.runq.is_empty() { None } else { self.s.pick(cpu, self.k.cfg.node_of_cpu(cpu)) };
            match picked {
                Some(t) => {
                    self.cpu_idle[cpu as usize] = false;
                    self.run_task(cpu, t);
                }
                None => {
                    if !self.cpu_idle[cpu as usize] {
                        self.cpu_idle[cpu as usize] = true;
                        // Switching to the idle task is a context switch (`nr_switches`), and so
                        // is leaving it: the next task counts as another switch even if it is
                        // the one that ran before.
                        if self.s.cpus[cpu as usize].last.take().is_some() {
                            self.s.nr_switches += 1;
                        }
                        self.idle_loop(cpu);
                    }
                }
            }
        }
    }

    /// The idle task coming back to the CPU (ia64 `cpu_idle`: `schedule(); check_pgt_cache();`),
    /// which trims at most 16 pages. Timer ticks do not bring it back — the CPU halts until a
    /// task is woken there — but every second each CPU's `events/N` thread runs `vmstat_update`,
    /// so an idle CPU returns to its idle loop once a second: that pass is modelled as an
    /// `IdleTick`, armed only while the CPU's quicklist is long enough to be trimmed.
    fn idle_loop(&mut self, cpu: u32) {
        if self.k.profile.quicklist == QuicklistRule::None {
            return;
        }
        let c = cpu as usize;
        let mut ctx = Ctx { cpu, node: self.k.cfg.node_of_cpu(cpu), now: self.s.now, ..Default::default() };
        crate::quicklist::check_pgt_cache(&mut self.k, &mut ctx);
        if self.k.quicklists[c].len > crate::quicklist::MIN_PAGES && !self.idle_tick_armed[c] {
            self.idle_tick_armed[c] = true;
            let next = (self.s.now / VMSTAT_INTERVAL_NS + 1) * VMSTAT_INTERVAL_NS;
            self.s.push(next, Event::IdleTick(cpu));
        }
    }

    fn run_task(&mut self, cpu: u32, t: usize) {
        let mut ctx = self.ctx_for(cpu, t);
        self.s.tasks[t].state = TState::Running(cpu);
        self.s.tasks[t].wake_pending = false;
        self.s.tasks[t].throttle_woken = false;
        if crate::vmscan::throttle::any_waiter(&self.k) {
            crate::vmscan::throttle::finish_wait(&mut self.k, t, cpu, self.s.now);
        }
        if self.s.tasks[t].last_cpu != cpu {
            ctx.sys_ns += self.k.cost.context_switch;
        }
        self.s.tasks[t].last_cpu = cpu;
        let kind = self.s.tasks[t].kind;
        let outcome = match kind {
            TaskKind::User => crate::syscalls::step(self, t, &mut ctx),
            _ => crate::sched::run_kthread(&mut self.k, &mut ctx, kind),
        };
        // Queue the I/O this quantum started now, ahead of the task's own wake-up at its
        // completion time, so a task waiting for it finds the page unlocked when it wakes.
        self.queue_started_io();
        let used = (ctx.sys_ns + ctx.user_ns).max(100);
        if kind == TaskKind::User {
            crate::psi::running(&mut self.k, self.s.tasks[t].memcg, t, self.s.now, self.s.now + used);
        }
        let task = &mut self.s.tasks[t];
        task.utime_ns += ctx.user_ns;
        task.stime_ns += used - ctx.user_ns;
        if self.s.cpus[cpu as usize].last != Some(t) {
            self.s.nr_switches += 1;
            self.s.cpus[cpu as usize].last = Some(t);
        }
        let c = &mut self.s.cpus[cpu as usize];
        c.us_ns += ctx.user_ns;
        c.sy_ns += used - ctx.user_ns;
        c.running = Some(t);
        c.outcome = Some(outcome);
        c.sleep_after = ctx.sleep_ns;
        c.throttle_sleep = ctx.throttle_sleep_ns;
        c.throttle_deadline = ctx.throttle_deadline;
        c.busy_until = self.s.now + used;
        self.s.push(self.s.now + used, Event::CpuDone(cpu));
        #[cfg(debug_assertions)]
        if let Err(e) = self.k.check_conservation() {
            panic!("after a quantum of {}: {e}", self.s.tasks[t].name);
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::CpuDone(cpu) => {
                let c = &mut self.s.cpus[cpu as usize];
                if c.irq_delay > 0 && c.running.is_some() {
                    let d = std::mem::take(&mut c.irq_delay);
                    self.s.push(self.s.now + d, Event::CpuDone(cpu));
                    return;
                }
                let Some(t) = c.running.take() else { return };
                let outcome = c.outcome.take().unwrap_or(Outcome::Continue);
                let mut sleep_after = std::mem::take(&mut c.sleep_after);
                let throttle_sleep = std::mem::take(&mut c.throttle_sleep);
                let throttle_deadline = std::mem::take(&mut c.throttle_deadline);
                let mut outcome = outcome;
                if std::mem::take(&mut self.s.tasks[t].throttle_woken) {
                    // Woken from its reclaim_wait queue before its quantum ended: the throttle
                    // does not sleep (its stall ended at the wakeup).
                    sleep_after -= throttle_sleep.min(sleep_after);
                    if matches!(outcome, Outcome::Block { until: Some(u), .. } if u == throttle_deadline) {
                        outcome = Outcome::Continue;
                    }
                }
                self.finish(t, outcome, sleep_after);
            }
            Event::Wake(t, gen) => {
                if self.s.tasks[t].gen == gen && self.s.tasks[t].state == TState::Blocked {
                    self.s.set_runnable(t);
                }
            }
            Event::Io(i) => {
                let d = self.s.take_io(i);
                // vmstat's `in` counts completions (merged submissions too, as it always has);
                // a read's bounce pages are freed in its own handler.
                // A worker's release of an io_end is no interrupt either.
                if !matches!(d, Some(crate::kernel::IoDone::Bounce(_) | crate::kernel::IoDone::Release { .. })) {
                    self.s.nr_irqs += 1;
                }
                if let Some(d) = d {
                    if let Some((disk, ns, own)) = crate::irq::handler_ns(&self.k, &d) {
                        self.interrupt(disk, ns, own);
                    }
                    if let Some((disk, ns)) = crate::irq::worker_ns(&self.k, &d) {
                        self.completion_work(disk, ns);
                    }
                    let mut ctx = Ctx { now: self.s.now, ..Default::default() };
                    self.k.io_complete(&mut ctx, d);
                }
            }
            Event::Sample => {
                self.sample();
                if let Some(mut f) = self.on_sample.take() {
                    f(self);
                    self.on_sample = Some(f);
                }
                if self.workload_end.map(|w| self.s.now <= w.saturating_add(self.linger)).unwrap_or(true) {
                    self.s.push(self.s.now.saturating_add(self.interval), Event::Sample);
                }
            }
            Event::IdleTick(cpu) => {
                let c = cpu as usize;
                self.idle_tick_armed[c] = false;
                if self.cpu_idle[c] && self.s.cpus[c].running.is_none() {
                    self.idle_loop(cpu);
                }
            }
            Event::NetRx(i) => {
                // The softirq runs on one of the node's CPUs, in atomic context: it never sleeps
                // and never reclaims.
                let node = self.netrx[i].node;
                let cpu = self.k.cfg.pick_cpu_of_node(node as u32, self.k.rng.next_u32());
                let mut ctx = Ctx { cpu, node, now: self.s.now, ..Default::default() };
                let src = &mut self.netrx[i];
                src.interrupt(&mut self.k, &mut ctx);
                let gap = src.next_gap(&mut self.k);
                self.s.push(self.s.now + gap, Event::NetRx(i));
            }
            Event::Kmem(i) => {
                let cpu = self.k.cfg.pick_cpu_of_node(0, self.k.rng.next_u32());
                let mut ctx = Ctx { cpu, node: 0, now: self.s.now, ..Default::default() };
                self.kmem[i].event(&mut self.k, &mut ctx);
                let gap = self.kmem[i].next_gap(&mut self.k);
                self.s.push(self.s.now + gap, Event::Kmem(i));
            }
            Event::IrqEnd(_) => {}
            Event::BlkRun(d) => {
                self.k.disks[d].blk_run(self.s.now);
                self.k.collect_dispatched(d);
                self.drain_kernel_requests();
            }
            Event::PageReporting => crate::page_reporting::page_reporting_process(&mut self.k),
            Event::TcpAck => {
                // The ACKs arrive by network receive, on the CPU that takes the NIC's softirq.
                let cpu = self.k.cfg.pick_cpu_of_node(0, self.k.rng.next_u32());
                let mut ctx = Ctx { cpu, node: 0, now: self.s.now, ..Default::default() };
                crate::tcp::tcp_clean_rtx_queue(&mut self.k, &mut ctx);
            }
            Event::Start(t) => {
                // The process's exec: `bprm_mm_init` → `mm_alloc`, which needs the pgd.
                let mut ctx = Ctx { now: self.s.now, ..Default::default() };
                let name = self.s.tasks[t].name.clone();
                let mm = match self.k.mm_create(&mut ctx, &name) {
                    Ok(mm) => mm,
                    Err(crate::page_alloc::AllocFail::Throttled) => {
                        // The GFP_KERNEL order-0 allocation waits and tries again; so does the exec.
                        let at = crate::oom_kill::alloc_retry_at(&mut ctx);
                        self.s.push(at, Event::Start(t));
                        return;
                    }
                    Err(_) => {
                        // execve fails with -ENOMEM: the process never runs.
                        self.s.tasks[t].state = TState::Exited;
                        self.user_alive -= 1;
                        self.check_workload_end();
                        return;
                    }
                };
                self.k.mm_mut(mm).memlock_limit = self.s.tasks[t].memlock_limit;
                self.k.mm_mut(mm).memcg = self.s.tasks[t].memcg;
                self.s.tasks[t].mm = Some(mm);
                self.s.set_runnable(t);
            }
        }
    }

    /// A hard interrupt of `disk` whose handler takes `ns`: it runs on the CPU the profile's
    /// delivery picks and takes its time from what runs there. `own`: false for the work of a
    /// merged submission, done by the handler of the request it joined (the last one's CPU).
    pub fn interrupt(&mut self, disk: usize, ns: u64, own: bool) {
        let ncpu = self.s.cpus.len() as u32;
        let cpu = if own || self.s.irq_seq == 0 {
            let c = crate::irq::target_cpu(self.k.profile.irq, disk, self.s.irq_seq, ncpu);
            self.s.irq_seq += 1;
            c
        } else {
            crate::irq::target_cpu(self.k.profile.irq, disk, self.s.irq_seq - 1, ncpu)
        };
        self.take_cpu_time(cpu, disk, ns, own);
    }

    /// The file system's completion worker ending an io_end's pages (ext4's `ext4-rsv-conversion`,
    /// an unbound workqueue: `alloc_workqueue(..., WQ_MEM_RECLAIM | WQ_UNBOUND, 1)`, whose kworker
    /// the scheduler wakes on an idle CPU when there is one): its time goes to the first idle
    /// CPU, else to the CPU the disk's interrupts take, from whatever runs there. vmlab has no
    /// task for it.
    pub fn completion_work(&mut self, disk: usize, ns: u64) {
        let now = self.s.now;
        let idle = self.s.cpus.iter().position(|c| c.running.is_none() && c.busy_until <= now);
        let ncpu = self.s.cpus.len() as u32;
        let cpu =
            idle.map_or_else(|| crate::irq::target_cpu(self.k.profile.irq, disk, self.s.irq_seq, ncpu), |c| c as u32);
        self.take_cpu_time(cpu, disk, ns, false);
    }

    /// `ns` of completion work of `disk` on `cpu`, taken from what runs there (an idle CPU
    /// absorbs it); `own`: an interrupt of its own, counted as a call.
    fn take_cpu_time(&mut self, cpu: u32, disk: usize, ns: u64, own: bool) {
        if let Some(row) = self.k.prof.irq.get_mut(disk) {
            row.ns += ns;
            row.calls += own as u64;
        }
        let now = self.s.now;
        let c = &mut self.s.cpus[cpu as usize];
        c.sy_ns += ns;
        if let Some(t) = c.running {
            // The interrupted task's work, and any lock hold it is in, end later by as much.
            c.irq_delay += ns;
            c.busy_until += ns;
            if crate::irq::charged_to_task(self.k.profile.irq) {
                self.s.tasks[t].stime_ns += ns;
            }
            crate::vmscan::irq_interrupted(&mut self.k, cpu, now, ns);
        } else {
            // An idle CPU absorbs it; a task woken there meanwhile starts once it returns.
            let end = c.busy_until.max(now) + ns;
            c.busy_until = end;
            self.s.push(end, Event::IrqEnd(cpu));
        }
    }

    fn finish(&mut self, t: usize, outcome: Outcome, sleep_after: u64) {
        let now = self.s.now;
        let pending = self.s.tasks[t].wake_pending;
        self.s.tasks[t].wake_pending = false;
        match outcome {
            Outcome::Continue if sleep_after > 0 => {
                self.s.block(t, Some(now + sleep_after), false);
                self.s.mark_reclaim_wait(t);
            }
            Outcome::Continue => self.s.set_runnable(t),
            Outcome::Block { until, io } => {
                if io {
                    // A task waiting on a page or buffer runs 2.4's `tq_disk` (`sync_page`).
                    self.k.run_tq_disk(now);
                }
                if pending && (until.is_none() || self.s.tasks[t].kind != TaskKind::User) {
                    self.s.set_runnable(t);
                } else {
                    let until = until.map(|u| u.max(now).saturating_add(sleep_after));
                    self.s.block(t, until, io);
                }
            }
            Outcome::SleepForever => {
                self.s.block(t, None, false);
                if !self.s.tasks[t].forever {
                    self.s.tasks[t].forever = true;
                    self.user_forever += 1;
                    self.check_workload_end();
                }
            }
            Outcome::Exit => {
                self.s.tasks[t].state = TState::Exited;
                self.user_alive -= 1;
                self.check_workload_end();
            }
        }
    }

    pub fn check_workload_end(&mut self) {
        if self.workload_end.is_none() && self.user_alive == self.user_forever {
            self.workload_end = Some(self.s.now);
        }
    }

    /// End the tasks of processes the OOM killer chose and free their memory.
    fn reap_oom_victims(&mut self) {
        let victims = std::mem::take(&mut self.k.oom_killed);
        for mm in victims {
            let tasks: Vec<usize> = (0..self.s.tasks.len())
                .filter(|&t| self.s.tasks[t].mm == Some(mm) && self.s.tasks[t].state != TState::Exited)
                .collect();
            for &t in &tasks {
                if let TState::Running(_) = self.s.tasks[t].state {
                    // It finishes its quantum first; mark it so its next step exits.
                    if let Some(p) = self.s.tasks[t].prog.as_mut() {
                        p.pc = usize::MAX;
                    }
                    continue;
                }
                crate::syscalls::kill_task(self, t);
            }
        }
    }

    fn sample(&mut self) {
        let now = self.s.now;
        crate::vmscan::throttle::expire(&mut self.k, now);
        crate::psi::update(&mut self.k, now);
        let dt = now.saturating_sub(self.sstate.last_t).max(1);
        let ncpu = self.s.cpus.len() as u64;
        let us: u64 = self.s.cpus.iter().map(|c| c.us_ns).sum();
        let sy: u64 = self.s.cpus.iter().map(|c| c.sy_ns).sum();
        let (dus, dsy) = (us - self.sstate.last_us, sy - self.sstate.last_sy);
        self.s.iowait_tick_pub();
        let dio = self.s.iowait_ns - self.sstate.last_iowait;
        let total = dt * ncpu;
        let idle = total.saturating_sub(dus + dsy);
        let wa = dio.min(idle);
        let pct = |x: u64| ((x as f64 * 100.0 / total as f64).round() as u32).min(100);
        let ev = |c: Vm, st: &SampleState, k: &Kernel| k.ev.get(c) - st.last_ev[c as usize];
        let per_s = |n: u64| n * 1_000_000_000 / dt;
        let ksw: u64 = self.s.tasks.iter().filter(|t| matches!(t.kind, TaskKind::Kswapd(_))).map(|t| t.stime_ns).sum();
        let r = self.s.tasks.iter().filter(|t| matches!(t.state, TState::Running(_) | TState::Runnable)).count() as u32;
        let b = self.s.tasks.iter().filter(|t| t.state == TState::Blocked && t.iowait).count() as u32;
        let zones = self
            .k
            .zones
            .iter()
            .map(|z| (z.free_pages, z.nr_free.iter().enumerate().skip(3).map(|(o, n)| n << o).sum(), z.nr_free))
            .collect();
        self.buddy_samples.push((now as f64 / 1e9, zones));
        let mi = self.meminfo();
        let sample = Sample {
            t_s: now as f64 / 1e9,
            r,
            b,
            swpd_kb: mi.swap_total - mi.swap_free,
            free_kb: mi.mem_free,
            buff_kb: mi.buffers,
            cache_kb: mi.cached,
            si: per_s(ev(Vm::Pswpin, &self.sstate, &self.k) * 4),
            so: per_s(ev(Vm::Pswpout, &self.sstate, &self.k) * 4),
            bi: per_s(ev(Vm::Pgpgin, &self.sstate, &self.k)),
            bo: per_s(ev(Vm::Pgpgout, &self.sstate, &self.k)),
            in_: per_s(self.s.nr_irqs - self.sstate.last_irqs),
            cs: per_s(self.s.nr_switches - self.sstate.last_switches),
            us: pct(dus),
            sy: pct(dsy),
            id: pct(idle - wa),
            wa: pct(wa),
            st: 0,
            swap_used_kb: mi.swap_total - mi.swap_free,
            cached_kb: mi.cached,
            dirty_kb: mi.dirty,
            kswapd_cpu_pct: (ksw - self.sstate.last_kswapd_ns) as f64 * 100.0 / dt as f64,
            pgscank_s: per_s(ev(Vm::PgscanKswapd, &self.sstate, &self.k)) as f64,
            pgscand_s: per_s(ev(Vm::PgscanDirect, &self.sstate, &self.k)) as f64,
            pgsteal_s: per_s(
                ev(Vm::PgstealKswapd, &self.sstate, &self.k) + ev(Vm::PgstealDirect, &self.sstate, &self.k),
            ) as f64,
            majflt_s: per_s(ev(Vm::Pgmajfault, &self.sstate, &self.k)) as f64,
        };
        self.samples.push(sample);
        self.sstate.last_us = us;
        self.sstate.last_sy = sy;
        self.sstate.last_iowait = self.s.iowait_ns;
        self.sstate.last_t = now;
        self.sstate.last_kswapd_ns = ksw;
        self.sstate.last_switches = self.s.nr_switches;
        self.sstate.last_irqs = self.s.nr_irqs;
        for &c in Vm::ALL {
            self.sstate.last_ev[c as usize] = self.k.ev.get(c);
        }
    }

    fn lru_total(&self, l: usize) -> u64 {
        self.k.zones.iter().map(|z| z.lru_pages[l]).sum()
    }

    pub fn meminfo(&self) -> Meminfo {
        crate::stats::procfs::source::meminfo_of(&self.k)
    }

    /// The state the /proc files are written from.
    pub fn proc_source(&self) -> crate::stats::procfs::ProcSource<'_> {
        let end = self.s.now;
        let stat = crate::stats::procfs::source::StatData {
            cpu_us_ns: self.s.cpus.iter().map(|c| c.us_ns).collect(),
            cpu_sy_ns: self.s.cpus.iter().map(|c| c.sy_ns).collect(),
            elapsed_ns: end,
            iowait_ns: self.s.iowait_ns,
            nr_irqs: self.s.nr_irqs,
            nr_switches: self.s.nr_switches,
            processes: self.s.tasks.len() as u64,
            procs_running: self
                .s
                .tasks
                .iter()
                .filter(|t| matches!(t.state, TState::Running(_) | TState::Runnable))
                .count() as u64,
            procs_blocked: self.s.nr_iowait as u64,
        };
        crate::stats::procfs::ProcSource::new(&self.k, stat)
    }

    /// `/proc/meminfo`, `/proc/vmstat` (where the release has it) and `/proc/stat` as the
    /// profile's release prints them: (file name, text).
    pub fn proc_files(&self) -> Vec<(&'static str, String)> {
        let pf = self.k.profile.procfs;
        let src = self.proc_source();
        let mut v = vec![("meminfo", pf.meminfo_text(&src))];
        if let Some(t) = pf.vmstat_text(&src) {
            v.push(("vmstat", t));
        }
        v.push(("stat", pf.stat_text(&src)));
        v
    }

    /// The `nr_*` gauges of /proc/vmstat.
    pub fn gauges(&self) -> Vec<(&'static str, u64)> {
        let k = &self.k;
        vec![
            ("nr_free_pages", k.nr_free_pages()),
            ("nr_inactive_anon", self.lru_total(LRU_INACTIVE_ANON)),
            ("nr_active_anon", self.lru_total(LRU_ACTIVE_ANON)),
            ("nr_inactive_file", self.lru_total(LRU_INACTIVE_FILE)),
            ("nr_active_file", self.lru_total(LRU_ACTIVE_FILE)),
            ("nr_unevictable", self.lru_total(LRU_UNEVICTABLE)),
            ("nr_mlock", k.g.mlock),
            ("nr_anon_pages", k.g.anon_mapped),
            ("nr_mapped", k.g.mapped),
            ("nr_file_pages", k.g.file + k.g.swapcache),
            ("nr_dirty", k.g.dirty),
            ("nr_writeback", k.g.writeback),
            ("nr_shmem", k.g.shmem),
            ("nr_page_table_pages", k.g.pagetable),
            ("nr_swapcached", k.g.swapcache),
            ("nr_slab_unreclaimable", k.g.slab),
        ]
    }

    pub fn elapsed_ns(&self) -> u64 {
        self.workload_end.unwrap_or(self.s.now)
    }

    pub fn metric(&mut self, name: &str, v: f64) {
        match self.metrics.iter_mut().find(|(n, _)| n == name) {
            Some(x) => x.1 = v,
            None => self.metrics.push((name.to_string(), v)),
        }
    }

    pub fn report(&self, wall_s: f64) -> RunReport {
        let total = self.s.now.max(1) as f64;
        let tasks = self
            .s
            .tasks
            .iter()
            .map(|t| TaskCpu {
                pid: t.pid,
                name: t.name.clone(),
                cpu_s: (t.utime_ns + t.stime_ns) as f64 / 1e9,
                cpu_pct: (t.utime_ns + t.stime_ns) as f64 * 100.0 / total,
                kthread: t.kind != TaskKind::User,
            })
            .collect();
        let mut params = crate::stats::ordered::OrderedMap::new();
        for (k, v) in &self.params {
            params.insert(k.clone(), v.clone());
        }
        let mut metrics = crate::stats::ordered::OrderedMap::new();
        for (k, v) in &self.metrics {
            metrics.insert(k.clone(), *v);
        }
        // A loop device's worker (loop_dev.rs): its executions, the writes it submitted and the
        // summed wait of its list's head for it.
        for (d, dev) in self.k.loops.devs.iter().enumerate().filter(|(_, l)| l.task != usize::MAX) {
            metrics.insert(format!("loop{d}_worker_runs"), dev.runs as f64);
            metrics.insert(format!("loop{d}_submitted"), dev.submitted as f64);
            metrics.insert(format!("loop{d}_head_waited_ms"), dev.waited_ns as f64 / 1e6);
        }
        RunReport {
            schema: report::RUN_SCHEMA.to_string(),
            scenario: self.scenario_name.clone(),
            profile: self.k.profile.name.to_string(),
            seed: self.seed,
            params,
            notes: crate::stats::ordered::OrderedMap::new(),
            machine: Machine {
                memory_bytes: self.k.total_pages() * 4096,
                cpus: self.k.cfg.cpus,
                nodes: self.k.cfg.nodes,
            },
            elapsed_s: self.elapsed_ns() as f64 / 1e9,
            vmstat: self.k.profile.procfs.vmstat(&self.proc_source()).into_iter().collect(),
            meminfo: self.k.profile.procfs.meminfo(&self.proc_source()).into_iter().collect(),
            counters: report::vmstat_map(&self.gauges(), &self.k.ev),
            timeline: self.samples.clone(),
            tasks,
            kernel_profile: report::kernel_profile_entries(&self.k.prof),
            metrics,
            events: self.k.events,
            pressure: self.k.profile.psi.then(|| crate::stats::memcg_fmt::system_pressure(&self.k, self.s.now)),
            cgroups: crate::stats::memcg_fmt::cgroup_reports(&self.k, self.s.now),
            disks: self
                .disk_ids
                .iter()
                .filter(|&(_, &i)| self.k.disks[i].has_queue())
                .map(|(name, &i)| report::DiskReport { name: name.clone(), stat: self.k.disks[i].stat(), times: None })
                .collect(),
            own: None,
            wall_s,
        }
    }

    /// `/sys/block/DEV/stat`'s time fields of the scenario's disk `name` at the end of the run.
    pub fn disk_times(&self, name: &str) -> Option<crate::disk::DiskTimes> {
        self.disk_ids.get(name).map(|&i| self.k.disks[i].times(self.s.now))
    }
}

/// The flat profile's name for a disk's interrupt handler when the scenario does not name it.
const DISK_IRQ: &str = "disk_irq";

/// `sysctl_stat_interval` (HZ): `vmstat_update` runs on every CPU once a second, on a
/// rounded jiffy (`round_jiffies_relative`).
const VMSTAT_INTERVAL_NS: u64 = 1_000_000_000;
