//! The `vc` and `dr` lines: the /proc/vmstat counters a 2.6.36 box prints, per interval, so a
//! run can be set counter by counter beside a reporter's posted vmstat turned into rates (his
//! counters are cumulative since boot; a rate is what compares across a 15-day uptime and a
//! one-day run). The per-zone counters are 2.6.36's `pgalloc_*`, `pgrefill_*`, `pgsteal_*`
//! (kswapd and direct together, as 2.6.36 counts it) and `pgscan_{kswapd,direct}_*`.
//!
//! The `dr` line reads the flows behind them: direct reclaim entries (`allocstall`) by order
//! and GFP kind, and the pages Normal handed out while its free pages were below its LOW
//! watermark after the take (only a slow-path allocation at MIN, or an ALLOC_HARDER/HIGH one,
//! can take a page there), by GFP kind and order, beside all pages Normal handed out, and the
//! least free pages Normal held at an allocation in the interval. An observer attached beside
//! `Runs`: the run is the same with or without it.

use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::ZoneType;
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::trace::{kind, GfpKind, Tracepoint, Tracer};

const KINDS: [&str; 3] = ["movable", "kernel", "atomic"];
const ORDERS: [&str; 4] = ["o0", "o1", "o2", "o3+"];

fn kind_ix(g: GfpKind) -> usize {
    match g {
        GfpKind::HighuserMovable => 0,
        GfpKind::Kernel => 1,
        GfpKind::Atomic => 2,
    }
}

#[derive(Default, Clone, Copy)]
struct Flows {
    /// Direct reclaim entries, [gfp kind][order bucket].
    stall: [[u64; 4]; 3],
    /// Pages Normal handed out, [gfp kind][order bucket]: all, and with free < LOW after.
    normal: [[u64; 4]; 3],
    normal_below_low: [[u64; 4]; 3],
}

pub struct VmstatLine {
    nz: Option<usize>,
    cum: Flows,
    prev: std::cell::Cell<Flows>,
    /// Least free pages of Normal seen after an allocation from it since the last line.
    least: std::cell::Cell<u64>,
    prev_ev: std::cell::RefCell<Vec<u64>>,
    prev_zone: std::cell::RefCell<Vec<[u64; 5]>>,
}

/// The global counters of the `vc` line, in 2.6.36's names (`kswapd_steal` is vmlab's
/// `pgsteal_kswapd`).
const GLOBAL: [(Vm, &str); 21] = [
    (Vm::Pgfree, "pgfree"),
    (Vm::PgstealKswapd, "kswapd_steal"),
    (Vm::PgstealDirect, "direct_steal"),
    (Vm::Allocstall, "allocstall"),
    (Vm::Pageoutrun, "pageoutrun"),
    (Vm::KswapdInodesteal, "kswapd_inodesteal"),
    (Vm::Pginodesteal, "pginodesteal"),
    (Vm::SlabsScanned, "slabs_scanned"),
    (Vm::Pgactivate, "pgactivate"),
    (Vm::Pgdeactivate, "pgdeactivate"),
    (Vm::Pgrotated, "pgrotated"),
    (Vm::CompactStall, "compact_stall"),
    (Vm::CompactFail, "compact_fail"),
    (Vm::CompactSuccess, "compact_success"),
    (Vm::KswapdLowWmarkHitQuickly, "kswapd_low_wmark_hit_quickly"),
    (Vm::KswapdHighWmarkHitQuickly, "kswapd_high_wmark_hit_quickly"),
    (Vm::KswapdSkipCongestionWait, "kswapd_skip_congestion_wait"),
    (Vm::Pgfault, "pgfault"),
    (Vm::Pgmajfault, "pgmajfault"),
    (Vm::Pgpgin, "pgpgin"),
    (Vm::Pgpgout, "pgpgout"),
];

impl VmstatLine {
    pub fn new(k: &Kernel) -> VmstatLine {
        VmstatLine {
            nz: k.zones.iter().position(|z| z.kind == ZoneType::Normal),
            cum: Flows::default(),
            prev: Default::default(),
            least: std::cell::Cell::new(u64::MAX),
            prev_ev: std::cell::RefCell::new(vec![0; GLOBAL.len()]),
            prev_zone: std::cell::RefCell::new(vec![[0; 5]; k.zones.len()]),
        }
    }

    pub fn header() -> String {
        let g: Vec<&str> = GLOBAL.iter().map(|&(_, n)| n).collect();
        format!(
            "vc t_h | per zone (DMA32, Normal): pgalloc pgrefill pgsteal pgscan_kswapd pgscan_direct | {} (all per interval)\n\
             dr t_h | allocstall by gfp {} x order {} | Normal pages handed out by gfp x order: all ; with Normal free < LOW after the take | Normal's least free at an allocation",
            g.join(" "),
            KINDS.join("/"),
            ORDERS.join("/")
        )
    }

    fn grid(a: &[[u64; 4]; 3], b: &[[u64; 4]; 3]) -> String {
        (0..3)
            .map(|g| (0..4).map(|o| (a[g][o] - b[g][o]).to_string()).collect::<Vec<_>>().join("/"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The `vc` and `dr` lines for the interval since the previous call.
    pub fn lines(&self, k: &Kernel, t_h: f64) -> String {
        let mut vc = format!("vc {t_h:.1} |");
        let mut pz = self.prev_zone.borrow_mut();
        for t in [ZoneType::Dma32, ZoneType::Normal] {
            let Some(zid) = k.zones.iter().position(|z| z.kind == t) else { continue };
            let (e, alloc) =
                (&k.zones[zid].ev, if t == ZoneType::Normal { Vm::PgallocNormal } else { Vm::PgallocDma32 });
            let now =
                [k.ev.get(alloc), e.pgrefill, e.pgsteal_kswapd + e.pgsteal_direct, e.pgscan_kswapd, e.pgscan_direct];
            let d: Vec<String> = (0..5).map(|i| (now[i] - pz[zid][i]).to_string()).collect();
            vc += &format!(" {} {} |", t.name(), d.join(" "));
            pz[zid] = now;
        }
        let mut pe = self.prev_ev.borrow_mut();
        for (i, &(c, _)) in GLOBAL.iter().enumerate() {
            let v = k.ev.get(c);
            vc += &format!(" {}", v - pe[i]);
            pe[i] = v;
        }
        let (c, p) = (self.cum, self.prev.get());
        let least = self.least.replace(u64::MAX);
        let dr = format!(
            "dr {t_h:.1} | {} | {} ; {} | {}",
            Self::grid(&c.stall, &p.stall),
            Self::grid(&c.normal, &p.normal),
            Self::grid(&c.normal_below_low, &p.normal_below_low),
            if least == u64::MAX { "-".to_string() } else { least.to_string() }
        );
        self.prev.set(c);
        format!("{vc}\n{dr}")
    }
}

impl Tracer for VmstatLine {
    fn wants(&self) -> u32 {
        kind::MM_PAGE_ALLOC | kind::DIRECT_RECLAIM_BEGIN
    }
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        match *ev {
            Tracepoint::DirectReclaimBegin { order, gfp, .. } => {
                self.cum.stall[kind_ix(gfp)][(order as usize).min(3)] += 1;
            }
            Tracepoint::MmPageAlloc { zone, order, gfp, .. } if Some(zone) == self.nz => {
                let z = &k.zones[zone];
                let (g, o, n) = (kind_ix(gfp), (order as usize).min(3), 1u64 << order);
                self.cum.normal[g][o] += n;
                if z.free_pages < z.low_wmark() {
                    self.cum.normal_below_low[g][o] += n;
                }
                if z.free_pages < self.least.get() {
                    self.least.set(z.free_pages);
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
