//! `detail=FROM_S..TO_S`: Normal second by second, and kswapd run by run, inside a window (see
//! the example's header). An observer of its own, attached beside `Runs`.

use std::collections::HashMap;

use crate::common::{Handed, CLASSES, CLASS_FILE, CLASS_MOV_UNKNOWN, NCLASS};
use crate::form::Form;
use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{MAX_ORDER, MIGRATE_RESERVE};
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

/// Allocation paths: fast (LOW), slow (MIN), slow atomic (MIN less ALLOC_HIGH and ALLOC_HARDER).
const PATHS: [&str; 3] = ["fast@low", "slow@min", "slow-atomic"];
/// kswapd's reclaim by priority: 12, 11, 10, below 10.
const PRIOS: [&str; 4] = ["p12", "p11", "p10", "p<10"];

/// Running totals the per-run lines take differences of.
#[derive(Default, Clone, Copy)]
struct Cum {
    /// Normal: pages handed out, by path; freed by reclaim (cold) and by others (hot).
    handed: [u64; 3],
    freed_reclaim: u64,
    freed_other: u64,
    /// kswapd's reclaim from Normal by priority, and from DMA32.
    reclaimed_n: [u64; 4],
    reclaimed_d32: u64,
}

/// One second's figures for the `nz` line.
#[derive(Default, Clone)]
struct Sec {
    free_first: u64,
    free_min: u64,
    free_max: u64,
    handed: [[u64; NCLASS]; 3],
    /// Pages taken off Normal's buddy lists (`mm_page_alloc_zone_locked`: the request's pages,
    /// pcp refills included) by requested migrate type.
    taken: [u64; 3],
    /// Of those, pages from MIGRATE_RESERVE pageblocks.
    taken_reserve: u64,
    start: Cum,
    runs_begun: [u64; 2],
    runs_ended: u64,
    run_ns: u64,
    /// Allocator wakeups (`mm_vmscan_wakeup_kswapd`, fired only by a slow path): [Normal, DMA32][o0, o>0].
    wakes: [[u64; 2]; 2],
}

#[derive(Clone, Copy)]
struct RunStart {
    ns: u64,
    order: u32,
    passes: u64,
    cum: Cum,
    free: u64,
    lowest: i32,
    /// The gap before it: its length, a full sleep in it, and Normal's flows over it.
    gap_ns: u64,
    slept: bool,
    gap: (u64, u64, u64),
}

pub struct Detail {
    from_ns: u64,
    to_ns: u64,
    nz: usize,
    d32: usize,
    /// The second being summed (index in the window), None before the window or after it.
    sec: Option<u64>,
    s: Sec,
    cum: Cum,
    /// The page Normal handed out last, class not read yet: (page, path, pages).
    pending: Option<(Handed, usize, u64)>,
    /// Movable pages waiting for a class (readahead inserts them later): pfn → (path, pages).
    wait: HashMap<u32, (usize, u64)>,
    /// The slow path pending: (task, order) of the last wakeup an allocating task raised.
    slow: Option<(usize, u32)>,
    run: Option<RunStart>,
    last_end: Option<(u64, Cum)>,
    slept: bool,
    /// The order-3 blocks each order-3 run makes (`form` lines).
    form: Form,
}

impl Detail {
    pub fn new(k: &Kernel, from_s: u64, to_s: u64) -> Detail {
        use vmlab_core::mmzone::ZoneType;
        let find = |t: ZoneType| k.zones.iter().position(|z| z.kind == t);
        let nz = find(ZoneType::Normal).unwrap_or(0);
        Detail {
            from_ns: from_s * 1_000_000_000,
            to_ns: to_s * 1_000_000_000,
            nz,
            d32: find(ZoneType::Dma32).unwrap_or(0),
            sec: None,
            s: Sec::default(),
            cum: Cum::default(),
            pending: None,
            wait: HashMap::new(),
            slow: None,
            run: None,
            last_end: None,
            slept: false,
            form: Form::new(k, nz),
        }
    }

    pub fn header() -> String {
        format!(
            "nz t_s | Normal free first min max (min/low/high) | handed out by path {} : {} | taken off buddy lists unmov/mov/recl (from reserve pageblocks) | freed reclaim other | kswapd reclaimed Normal {} DMA32 | runs begun o0/o>0 ended, ms in runs ended | allocator wakeups Normal o0/o>0 DMA32 o0/o>0 | Normal buddy o0..o10\n\
             run t_begin_s | order begin>end | ms | passes | Normal reclaimed {} (lowest prio) DMA32 | Normal free begin>end (end o0/o1/o2/o3+ pages, o3+ in reserve) | gap before ms (full sleep) handed/freed-reclaim/freed-other in gap | in run handed/freed-reclaim/freed-other\n{}",
            PATHS.join("/"),
            CLASSES.join(","),
            PRIOS.join("/"),
            PRIOS.join("/"),
            Form::header(),
        )
    }

    fn in_window(&self, now: u64) -> bool {
        now >= self.from_ns && now < self.to_ns
    }

    fn free(&self, k: &Kernel) -> u64 {
        k.zones[self.nz].free_pages
    }

    /// Close the second being summed and open `sec` (None: the window is over).
    fn roll(&mut self, k: &Kernel, sec: Option<u64>) {
        if let Some(cur) = self.sec {
            self.print_sec(k, cur);
        }
        self.sec = sec;
        let f = self.free(k);
        self.s = Sec { free_first: f, free_min: f, free_max: f, start: self.cum, ..Default::default() };
    }

    fn print_sec(&self, k: &Kernel, cur: u64) {
        let z = &k.zones[self.nz];
        let s = &self.s;
        let handed: Vec<String> = s
            .handed
            .iter()
            .map(|h| {
                let who: Vec<String> =
                    h.iter().zip(CLASSES).filter(|(n, _)| **n > 0).map(|(n, w)| format!("{w} {n}")).collect();
                format!("{} ({})", h.iter().sum::<u64>(), who.join(", "))
            })
            .collect();
        let d = |a: u64, b: u64| a - b;
        let rec: Vec<String> = (0..4).map(|i| d(self.cum.reclaimed_n[i], s.start.reclaimed_n[i]).to_string()).collect();
        let buddy: Vec<String> = (0..MAX_ORDER).map(|o| z.nr_free[o].to_string()).collect();
        println!(
            "nz {} | {} {} {} ({}/{}/{}) | {} | {}/{}/{} ({}) | {} {} | {} {} | {}/{} {} {:.3} | {}/{} {}/{} | {}",
            (self.from_ns / 1_000_000_000) + cur,
            s.free_first,
            s.free_min,
            s.free_max,
            z.min_wmark(),
            z.low_wmark(),
            z.high_wmark(),
            handed.join(" : "),
            s.taken[0],
            s.taken[1],
            s.taken[2],
            s.taken_reserve,
            d(self.cum.freed_reclaim, s.start.freed_reclaim),
            d(self.cum.freed_other, s.start.freed_other),
            rec.join("/"),
            d(self.cum.reclaimed_d32, s.start.reclaimed_d32),
            s.runs_begun[0],
            s.runs_begun[1],
            s.runs_ended,
            s.run_ns as f64 / 1e6,
            s.wakes[0][0],
            s.wakes[0][1],
            s.wakes[1][0],
            s.wakes[1][1],
            buddy.join(",")
        );
    }

    fn count_handed(&mut self, path: usize, class: usize, pages: u64) {
        self.s.handed[path][class] += pages;
    }

    fn run_line(&self, k: &Kernel, r: &RunStart, end_order: u32) {
        let c = &self.cum;
        let z = &k.zones[self.nz];
        let rec: Vec<String> = (0..4).map(|i| (c.reclaimed_n[i] - r.cum.reclaimed_n[i]).to_string()).collect();
        let sum3 = |x: [u64; 3]| x.iter().sum::<u64>();
        println!(
            "run {:.3} | {}>{} | {:.3} | {} | {} ({}) {} | {}>{} ({}/{}/{}/{}, {}) | {:.1} ({}) {}/{}/{} | {}/{}/{}",
            r.ns as f64 / 1e9,
            r.order,
            end_order,
            (k.now - r.ns) as f64 / 1e6,
            k.ev.get(Vm::Pageoutrun) - r.passes,
            rec.join("/"),
            r.lowest,
            c.reclaimed_d32 - r.cum.reclaimed_d32,
            r.free,
            self.free(k),
            z.nr_free[0],
            z.nr_free[1] * 2,
            z.nr_free[2] * 4,
            crate::common::free_in_orders(z, 3..MAX_ORDER),
            crate::common::reserve_in_orders(z, 3..MAX_ORDER),
            r.gap_ns as f64 / 1e6,
            if r.slept { "slept" } else { "awake" },
            r.gap.0,
            r.gap.1,
            r.gap.2,
            sum3(c.handed) - sum3(r.cum.handed),
            c.freed_reclaim - r.cum.freed_reclaim,
            c.freed_other - r.cum.freed_other,
        );
    }
}

impl Tracer for Detail {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let now = k.now;
        if now >= self.to_ns {
            if self.sec.is_some() {
                self.roll(k, None);
            }
            return;
        }
        let window = self.in_window(now);
        if window {
            let sec = (now - self.from_ns) / 1_000_000_000;
            if self.sec != Some(sec) {
                self.roll(k, Some(sec));
            }
        }
        if let Some((h, path, pages)) = self.pending.take() {
            match h.class(k, ev) {
                Some(c) => {
                    self.count_handed(path, c, pages);
                    self.form.ends.owner_known(h.pfn, pages, c);
                }
                None => {
                    self.wait.insert(h.pfn, (path, pages));
                }
            }
        }
        let task = k.trace_at.task;
        let kswapd = k.nodes[0].kswapd.task;
        match *ev {
            // Only an allocator's slow path wakes kswapd; the NIC's softirq runs with task index
            // 0, kswapd's own, so the task is no test of who woke it.
            Tracepoint::WakeupKswapd { zid, order, .. } => {
                self.slow = Some((task, order));
                let z = if zid == self.nz {
                    0
                } else if zid == self.d32 {
                    1
                } else {
                    return;
                };
                self.s.wakes[z][(order > 0) as usize] += 1;
            }
            Tracepoint::MmPageAlloc { zone, order, migratetype, pfn, gfp } => {
                self.form.alloc();
                self.form.handed(k, pfn, order);
                if order == 0 && zone == self.nz {
                    self.form.ends.handed(pfn, k.trace_at.cpu);
                }
                let slow = self.slow.take() == Some((task, order));
                if zone != self.nz {
                    return;
                }
                let path = if !slow {
                    0
                } else if gfp == GfpKind::Atomic {
                    2
                } else {
                    1
                };
                let pages = 1u64 << order;
                self.cum.handed[path] += pages;
                self.pending = Some((Handed::new(k, pfn, gfp, migratetype), path, pages));
            }
            Tracepoint::MmPageAllocZoneLocked { zone, order, migratetype, pfn, block_order } if zone == self.nz => {
                self.form.taken(k, pfn, order, block_order, migratetype as usize);
                self.form.ends.taken(pfn, order);
                self.s.taken[(migratetype as usize).min(2)] += 1 << order;
                if k.pageblock_mt[k.pageblock_of(zone, pfn)] as usize == MIGRATE_RESERVE {
                    self.s.taken_reserve += 1 << order;
                }
            }
            Tracepoint::FilemapAdd { pfn, .. } => {
                if let Some((path, pages)) = self.wait.remove(&pfn) {
                    self.count_handed(path, CLASS_FILE, pages);
                    self.form.ends.owner_known(pfn, pages, CLASS_FILE);
                }
            }
            Tracepoint::MmPageFree { pfn, order, cold } => {
                self.form.freed(k, pfn, order, cold && task == kswapd);
                if let Some((path, pages)) = self.wait.remove(&pfn) {
                    self.count_handed(path, CLASS_MOV_UNKNOWN, pages);
                    self.form.ends.owner_known(pfn, pages, CLASS_MOV_UNKNOWN);
                }
                if k.zones[self.nz].spans(pfn) {
                    // Reclaim frees cold; nothing else here does (as `dma32_census` reads it).
                    if cold {
                        self.cum.freed_reclaim += 1 << order;
                    } else {
                        self.cum.freed_other += 1 << order;
                    }
                }
            }
            Tracepoint::LruShrinkInactive { zid, nr_reclaimed, priority, .. } if task == kswapd => {
                if zid == self.nz {
                    let b = (12 - priority.clamp(9, 12)) as usize;
                    self.cum.reclaimed_n[b] += nr_reclaimed;
                } else if zid == self.d32 {
                    self.cum.reclaimed_d32 += nr_reclaimed;
                }
                if let Some(r) = self.run.as_mut() {
                    r.lowest = r.lowest.min(priority);
                }
            }
            Tracepoint::LruIsolate { .. } if task == kswapd => self.form.ends.isolated(),
            Tracepoint::KswapdZoneCheck { zid, .. } if zid == self.nz && self.run.is_some() => {
                self.form.ends.checked(k)
            }
            Tracepoint::KswapdSleep { .. } => self.slept = true,
            Tracepoint::KswapdBalanceBegin { order, .. } => {
                self.run = None;
                if !window {
                    return;
                }
                self.s.runs_begun[(order > 0) as usize] += 1;
                if order > 0 {
                    self.form.begin(k);
                }
                let (gap_ns, gap) = match self.last_end {
                    Some((t, c)) => (
                        now - t,
                        (
                            self.cum.handed.iter().sum::<u64>() - c.handed.iter().sum::<u64>(),
                            self.cum.freed_reclaim - c.freed_reclaim,
                            self.cum.freed_other - c.freed_other,
                        ),
                    ),
                    None => (0, (0, 0, 0)),
                };
                self.run = Some(RunStart {
                    ns: now,
                    order,
                    passes: k.ev.get(Vm::Pageoutrun),
                    cum: self.cum,
                    free: self.free(k),
                    lowest: vmlab_core::vmscan::DEF_PRIORITY,
                    gap_ns,
                    slept: self.slept,
                    gap,
                });
            }
            Tracepoint::KswapdBalanceEnd { order, .. } => {
                self.last_end = Some((now, self.cum));
                self.slept = false;
                if let Some(r) = self.run.take() {
                    self.s.runs_ended += 1;
                    self.s.run_ns += now - r.ns;
                    self.run_line(k, &r, order);
                    if let Some(l) = self.form.end(k) {
                        println!("{l}");
                    }
                }
            }
            _ => {}
        }
        if window {
            let f = self.free(k);
            self.s.free_min = self.s.free_min.min(f);
            self.s.free_max = self.s.free_max.max(f);
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
