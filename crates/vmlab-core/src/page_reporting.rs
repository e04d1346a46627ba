//! Free page reporting (5.7+, mm/page_reporting.c): a guest tells its hypervisor which free
//! blocks it may take back. Read in `torvalds/linux` mm/page_reporting.c and mm/page_reporting.h
//! (the index's stored versions: the pass of 5.7, whose `page_reporting_cycle` lacks the later
//! budget, and the 5.8+ budget read in its linux-mm patch, "Limit how many calls we will be
//! making to the page reporting device for this list"); the 6.8 tree in the index has no copy.
//!
//! A free that leaves a block of at least `page_reporting_order` asks for a pass
//! (`page_reporting_notify_free` → `__page_reporting_request`), which runs
//! `PAGE_REPORTING_DELAY` (2 s) later so that a sizable queue builds. The pass walks every zone
//! whose free memory clears the low mark by a full batch, each free list of that order or more,
//! reporting unreported blocks in batches of `PAGE_REPORTING_CAPACITY`, at most a sixteenth of
//! the list and one batch more a pass; a list it leaves unfinished asks for another pass. A
//! reported block goes back at its list's tail (`__putback_isolated_page` → `__free_one_page`
//! with `FPI_TO_TAIL | FPI_SKIP_REPORT_NOTIFY`), flagged `PageReported` (which is
//! `PG_uptodate`'s bit, only valid on a free block's head), so allocations take unreported
//! blocks first; `del_page_from_free_list` clears the flag when the block leaves the list — an
//! allocation, a split, a merge with a freed buddy — and the merged block is reported again.
//!
//! The hypervisor's side is not the flag: once reported, a frame's memory may be discarded, and
//! the guest's next CPU touch of it faults in the host (a Firecracker guest: ~6.5 µs a page,
//! docs/REAL.md, sys31). `pg::DISCARDED` keeps that per frame until the first touch
//! ([`Kernel::first_touch`]), which pays `machine.cost.reported_touch`; DMA into the frame
//! does not clear it. Off unless `machine.page_reporting_order` is set.

use crate::kernel::Kernel;
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{MAX_ORDER, MIGRATE_TYPES};

/// `PAGE_REPORTING_DELAY`: 2 * HZ.
pub const PAGE_REPORTING_DELAY: u64 = 2_000_000_000;
/// `PAGE_REPORTING_CAPACITY`: blocks handed to the device in one `report` call.
pub const PAGE_REPORTING_CAPACITY: u64 = 32;

/// `prdev->state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    Requested,
    Active,
}

/// The reporting device's state (`struct page_reporting_dev_info`).
#[derive(Clone, Debug)]
pub struct PageReporting {
    /// `page_reporting_order`; `u8::MAX` when the machine reports nothing.
    pub order: u8,
    state: State,
    /// When the delayed work runs, and the time the scheduler has an event queued for.
    due: Option<u64>,
    pub armed: Option<u64>,
    /// Pages reported since boot (virtio-balloon's `reported_kib` in pages).
    pub reported_pages: u64,
    /// Pages whose first touch paid `reported_touch`.
    pub touched_pages: u64,
}

impl Default for PageReporting {
    fn default() -> Self {
        PageReporting {
            order: u8::MAX,
            state: State::Idle,
            due: None,
            armed: None,
            reported_pages: 0,
            touched_pages: 0,
        }
    }
}

impl PageReporting {
    /// `page_reporting_register`: the device takes reports of blocks of `order` and more, and
    /// asks for a first pass at once ("Begin initial flush of zones").
    pub fn register(&mut self, order: u8, now: u64) {
        self.order = order;
        self.request(now);
    }

    /// `page_reporting_notify_free`, from `__free_one_page` with the merged block's order.
    #[inline(always)]
    pub fn notify_free(&mut self, order: usize, now: u64) {
        if order >= self.order as usize {
            self.request(now);
        }
    }

    /// `__page_reporting_request`: a pass 2 s from now unless one is already asked for or
    /// running (a running pass sees the request when it ends).
    fn request(&mut self, now: u64) {
        let old = std::mem::replace(&mut self.state, State::Requested);
        if old == State::Idle {
            self.due = Some(now + PAGE_REPORTING_DELAY);
        }
    }

    /// The pass's time, when the scheduler has no event for it yet.
    pub fn timer_due(&self) -> Option<u64> {
        let t = self.due?;
        match self.armed {
            Some(a) if a <= t => None,
            _ => Some(t),
        }
    }
}

/// `page_reporting_process`: the delayed work. Reports what each zone's budget allows and asks
/// for another pass if some list was left unfinished or a free asked while it ran.
pub fn page_reporting_process(k: &mut Kernel) {
    let pr = &mut k.page_reporting;
    if pr.due.is_none_or(|t| t > k.now) {
        return;
    }
    pr.due = None;
    pr.armed = None;
    pr.state = State::Active;
    for zid in 0..k.zones.len() {
        page_reporting_process_zone(k, zid);
    }
    let pr = &mut k.page_reporting;
    if pr.state == State::Requested {
        pr.due = Some(k.now + PAGE_REPORTING_DELAY);
    } else {
        pr.state = State::Idle;
    }
}

/// `page_reporting_process_zone`: nothing unless the zone's free pages clear its low mark by a
/// full batch of the smallest reported order; then every list from that order up.
fn page_reporting_process_zone(k: &mut Kernel, zid: usize) {
    let min = k.page_reporting.order as usize;
    let watermark = k.zones[zid].low_wmark() + (PAGE_REPORTING_CAPACITY << min);
    if !k.zone_watermark_ok(zid, 0, watermark, zid, false, false) {
        return;
    }
    for order in min..MAX_ORDER {
        for mt in 0..MIGRATE_TYPES {
            page_reporting_cycle(k, zid, order, mt);
        }
    }
}

/// `page_reporting_cycle` on one free list: each unreported block is isolated, reported in a
/// batch and put back at the tail, flagged (the batches are synchronous here, so a block comes
/// back as it went: nothing can merge with it meanwhile); reported blocks are skipped. Out of
/// budget, the next unreported block becomes the list's head (`list_rotate_to_front`), the
/// skipped ones going behind it.
fn page_reporting_cycle(k: &mut Kernel, zid: usize, order: usize, mt: usize) {
    let z = &mut k.zones[zid];
    let list = &mut z.free_area[order][mt];
    // `budget` calls of a full batch beyond the first: a sixteenth of the order's free blocks.
    let budget = z.nr_free[order].div_ceil(PAGE_REPORTING_CAPACITY * 16);
    let mut left = (budget + 1) * PAGE_REPORTING_CAPACITY;
    let mut p: Pfn = list.head;
    // The blocks put back go behind the last one of the walk: it ends with the list's length.
    for _ in 0..list.len {
        let next = k.fr.links[p as usize].next;
        if !k.fr.has(p, pg::REPORTED) {
            if left == 0 {
                k.page_reporting.state = State::Requested;
                while list.head != p {
                    let h = list.head;
                    list.remove(&mut k.fr, h);
                    list.push_tail(&mut k.fr, h);
                }
                return;
            }
            left -= 1;
            list.remove(&mut k.fr, p);
            list.push_tail(&mut k.fr, p);
            k.fr.set(p, pg::REPORTED);
            for f in p..p + (1 << order) {
                k.fr.set(f, pg::DISCARDED);
            }
            k.page_reporting.reported_pages += 1 << order;
        }
        p = next;
    }
}

/// The free memory of a guest that has been up a while, as reporting leaves it when a run
/// starts (`machine.reported_at_start`): every free block of the reporting order or more is
/// reported and sits at its list's tail, except `large` pages of such blocks freed within the
/// last `PAGE_REPORTING_DELAY` (at the lists' heads, reported by the pass due then); and `small`
/// pages lie in blocks below the reporting order, which no pass takes — fragments between the
/// memory the machine's other users hold, so order-0 allocations use them before any large
/// block (`__rmqueue_smallest` goes up from the order asked). The fragments are made as blocks
/// one order below the reporting order whose buddy is held (`pg::RESERVED`, the other users'
/// memory): neither can merge. With `reported`, the machine keeps only `small + large +
/// reported` pages free and holds the rest too, as the host's free lists hold only its free
/// memory: a pass's budget is a sixteenth of the lists it walks. Setup, not the run: no cost, no
/// counter.
pub fn settle_at_start(k: &mut Kernel, small: u64, large: u64, reported: Option<u64>) {
    let min = k.page_reporting.order as u32;
    if min as usize >= MAX_ORDER || min == 0 {
        return;
    }
    let (zl, n) = k.zonelist(0, crate::page_alloc::Gfp::highuser_movable());
    let zl = &zl[..n];
    make_fragments(k, zl, min - 1, small);
    if let Some(rep) = reported {
        hold_surplus(k, zl, small + large + rep);
    }
    let (state, due) = (k.page_reporting.state, k.page_reporting.due);
    // An idle guest's passes, budget after budget, until no list is left unfinished.
    loop {
        k.page_reporting.state = State::Active;
        for zid in 0..k.zones.len() {
            page_reporting_process_zone(k, zid);
        }
        if k.page_reporting.state != State::Requested {
            break;
        }
    }
    unreport_recent(k, zl, min, large);
    k.page_reporting.state = state;
    k.page_reporting.due = due;
}

/// A block the machine's other users hold: out of the allocator's reach for the run.
fn hold(k: &mut Kernel, p: Pfn, order: u32) {
    for f in p..p + (1 << order) {
        k.fr.set(f, pg::RESERVED);
    }
    k.g.reserved += 1 << order;
}

/// `pages` of free blocks of order `frag` whose buddies are held, from the zones allocations
/// try first.
fn make_fragments(k: &mut Kernel, zl: &[usize], frag: u32, pages: u64) {
    let mut left = pages.div_ceil(1 << frag);
    for &zid in zl {
        while left > 0 {
            let Some(p) = k.rmqueue(zid, frag + 1, crate::mmzone::Mt::Movable) else { break };
            hold(k, p + (1 << frag), frag);
            k.free_one_page(zid, p, frag);
            left -= 1;
        }
    }
}

/// Hold all but `keep` free pages, from the zones allocations try first: whole blocks while
/// they fit in the surplus, then smaller ones.
fn hold_surplus(k: &mut Kernel, zl: &[usize], keep: u64) {
    let mut free: u64 = zl.iter().map(|&z| k.zone_free(z)).sum();
    for &zid in zl {
        let mut o = MAX_ORDER as u32 - 1;
        while free > keep {
            while (1u64 << o) > free - keep {
                o -= 1;
            }
            match k.rmqueue(zid, o, crate::mmzone::Mt::Movable) {
                Some(p) => {
                    hold(k, p, o);
                    free -= 1 << o;
                }
                None if o == 0 => break,
                None => o -= 1,
            }
        }
    }
}

/// `pages` of reported blocks of order `min` made unreported and undiscarded, at the lists'
/// heads: freed back in the order taken, so the first taken ends deepest.
fn unreport_recent(k: &mut Kernel, zl: &[usize], min: u32, pages: u64) {
    let mut taken = Vec::new();
    let mut left = pages.div_ceil(1 << min);
    for &zid in zl {
        while left > 0 {
            let Some(p) = k.rmqueue(zid, min, crate::mmzone::Mt::Movable) else { break };
            for f in p..p + (1 << min) {
                k.fr.clear(f, pg::DISCARDED);
            }
            taken.push((zid, p));
            left -= 1;
        }
    }
    for (zid, p) in taken {
        k.free_one_page(zid, p, min);
    }
}

impl Kernel {
    /// The first CPU touch of a frame the hypervisor may have discarded: the copy to or from
    /// user space, a page's clearing or a COW copy pays `reported_touch` beside its own cost,
    /// in the same function (the fault is taken on the touching instruction).
    #[inline(always)]
    pub fn first_touch(&mut self, ctx: &mut crate::kernel::Ctx, f: crate::stats::kfunc::KFunc, pfn: Pfn) {
        if self.fr.test_clear(pfn, pg::DISCARDED) {
            self.page_reporting.touched_pages += 1;
            self.charge(ctx, f, self.cost.reported_touch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Ctx;
    use crate::machine::MachineConfig;
    use crate::mmzone::{Mt, ZoneType};
    use crate::stats::kfunc::KFunc;

    const S: u64 = 1_000_000_000;

    /// A 6.8 machine of 272 MiB (a 16 MiB DMA zone and a 256 MiB DMA32 one) reporting order 9
    /// and more, its first pass (the registration's) run at 2 s.
    fn reporting() -> (Kernel, usize) {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 65536)]);
        let mut k = Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).unwrap(), cfg, 1).unwrap();
        k.page_reporting.register(9, 0);
        k.now = 2 * S - 1;
        page_reporting_process(&mut k);
        assert_eq!(k.page_reporting.reported_pages, 0, "not before PAGE_REPORTING_DELAY");
        k.now = 2 * S;
        page_reporting_process(&mut k);
        (k, 1)
    }

    fn discarded(k: &Kernel, from: Pfn, n: u32) -> bool {
        (from..from + n).all(|p| k.fr.has(p, pg::DISCARDED))
    }

    #[test]
    fn a_pass_2s_after_a_large_free_reports_the_block_and_its_first_touch_pays_once() {
        let (mut k, z) = reporting();
        assert!(k.page_reporting.reported_pages > 0, "the boot's free memory is reported");
        // A block taken now is no longer the one reported; its frames stay discarded.
        let x = k.rmqueue(z, 10, Mt::Movable).unwrap();
        assert!(!k.fr.has(x, pg::REPORTED) && discarded(&k, x, 1024));
        // The whole block touched: each frame pays once.
        k.cost.reported_touch = 6_500;
        let mut ctx = Ctx::default();
        for p in x..x + 1024 {
            k.first_touch(&mut ctx, KFunc::CopyUserGeneric, p);
        }
        k.first_touch(&mut ctx, KFunc::CopyUserGeneric, x);
        assert_eq!(ctx.sys_ns, 1024 * 6_500, "once a frame");
        assert!(!discarded(&k, x, 1) && k.page_reporting.touched_pages == 1024);
        // Half of it freed at 3 s: its buddy is in use, so an order-9 block, reported at 5 s.
        k.now = 3 * S;
        k.free_one_page_mt(z, x, 9, Mt::Movable as usize);
        assert_eq!(k.page_reporting.timer_due(), Some(5 * S), "PAGE_REPORTING_DELAY after the free");
        assert!(!k.fr.has(x, pg::REPORTED) && !discarded(&k, x, 1));
        k.now = 5 * S;
        page_reporting_process(&mut k);
        assert!(k.fr.has(x, pg::REPORTED) && discarded(&k, x, 512), "reported, every frame discarded");
        assert!(!discarded(&k, x + 512, 1), "the half in use is not");
        assert_eq!(k.zones[z].free_area[9][Mt::Movable as usize].tail, x, "back at its list's tail");
        assert_eq!(k.page_reporting.timer_due(), None, "the pass went idle");
        // An allocation takes an unreported block before it.
        let y = k.rmqueue(z, 10, Mt::Movable).unwrap();
        k.free_one_page_mt(z, y + 512, 9, Mt::Movable as usize);
        assert_eq!(k.rmqueue(z, 9, Mt::Movable), Some(y + 512), "the unreported block first");
    }

    #[test]
    fn a_reported_block_merged_with_a_freed_buddy_loses_the_flag_and_is_reported_again() {
        let (mut k, z) = reporting();
        let x = k.rmqueue(z, 10, Mt::Movable).unwrap();
        let mut ctx = Ctx::default();
        for p in x..x + 1024 {
            k.first_touch(&mut ctx, KFunc::ClearPage, p);
        }
        k.now = 3 * S;
        k.free_one_page_mt(z, x, 9, Mt::Movable as usize);
        k.now = 5 * S;
        page_reporting_process(&mut k);
        assert!(k.fr.has(x, pg::REPORTED));
        // The buddy's free merges them: del_page_from_free_list clears the flag.
        k.now = 6 * S;
        k.free_one_page_mt(z, x + 512, 9, Mt::Movable as usize);
        assert!(k.fr.has(x, pg::BUDDY) && k.fr.aux[x as usize] & 0xf == 10, "one order-10 block");
        assert!(!k.fr.has(x, pg::REPORTED), "the merged block is not reported");
        assert!(discarded(&k, x, 512) && !discarded(&k, x + 512, 1), "the discard is the host's: it stays");
        assert_eq!(k.page_reporting.timer_due(), Some(8 * S));
        k.now = 8 * S;
        page_reporting_process(&mut k);
        assert!(k.fr.has(x, pg::REPORTED) && discarded(&k, x, 1024), "reported again, whole");
    }

    #[test]
    fn a_settled_guest_serves_fragments_then_recent_frees_then_reported_blocks() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 65536)]);
        let mut k = Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).unwrap(), cfg, 1).unwrap();
        k.page_reporting.register(9, 0);
        let free0 = k.zone_free(1);
        // 2 MiB of fragments (two order-8 blocks), 4 MiB freed just now (one order-10 block).
        settle_at_start(&mut k, 512, 1024, None);
        assert_eq!(k.zone_free(1), free0 - 512, "the fragments' buddies are held");
        assert_eq!(k.zones[1].nr_free[8], 2, "the fragments cannot merge");
        assert_eq!(k.page_reporting.timer_due(), Some(2 * S), "the registration's pass is still due");
        let order0 = |k: &mut Kernel| k.rmqueue(1, 0, Mt::Movable).unwrap();
        for _ in 0..512 {
            let p = order0(&mut k);
            assert!(!k.fr.has(p, pg::DISCARDED), "a fragment first: never reported");
        }
        for _ in 0..1024 {
            let p = order0(&mut k);
            assert!(!k.fr.has(p, pg::DISCARDED), "then the block freed last");
        }
        let p = order0(&mut k);
        assert!(k.fr.has(p, pg::DISCARDED), "then a block the idle guest reported");
        // Without the first allocations, the pass due at 2 s reports the recent block.
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 65536)]);
        let mut k = Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).unwrap(), cfg, 1).unwrap();
        k.page_reporting.register(9, 0);
        settle_at_start(&mut k, 0, 1024, None);
        let before = k.page_reporting.reported_pages;
        k.now = 2 * S;
        page_reporting_process(&mut k);
        assert_eq!(k.page_reporting.reported_pages, before + 1024);
        let p = order0(&mut k);
        assert!(k.fr.has(p, pg::DISCARDED), "every large block is reported now");
    }

    #[test]
    fn a_settled_guest_holds_all_but_its_free_memory() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 65536)]);
        let mut k = Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).unwrap(), cfg, 1).unwrap();
        k.page_reporting.register(9, 0);
        // 2 MiB of fragments, 4 MiB freed just now, 160 MiB reported: 166 MiB free of ~272.
        settle_at_start(&mut k, 512, 1024, Some(40_960));
        assert_eq!(k.zone_free(0) + k.zone_free(1), 512 + 1024 + 40_960);
        let reported_free = |k: &Kernel| -> u64 {
            (0..k.fr.flags.len() as Pfn)
                .filter(|&p| k.fr.has(p, pg::BUDDY) && k.fr.has(p, pg::REPORTED))
                .map(|p| 1u64 << (k.fr.aux[p as usize] & 0xf))
                .sum()
        };
        // The DMA zone's free memory stays unreported: it never clears its low mark by a batch.
        let dma = k.zone_free(0);
        assert!(dma > 0 && dma < 16_384);
        // Less what the holding left in blocks below the order to end on the exact figure.
        let before = reported_free(&k) + dma;
        assert!((40_960 - 511..=40_960).contains(&before), "the rest is reported: {before}");
        k.now = 2 * S;
        page_reporting_process(&mut k);
        // And the halves left unflagged where the recent blocks were split off reported ones.
        let after = reported_free(&k) + dma;
        assert!((before + 1024..=before + 1536).contains(&after), "the pass reports the recent block: {after}");
    }

    #[test]
    fn without_a_reporting_order_nothing_is_reported() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 65536)]);
        let mut k = Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).unwrap(), cfg, 1).unwrap();
        let x = k.rmqueue(1, 10, Mt::Movable).unwrap();
        k.free_one_page_mt(1, x, 10, Mt::Movable as usize);
        assert_eq!(k.page_reporting.timer_due(), None);
        k.now = 10 * S;
        page_reporting_process(&mut k);
        assert_eq!(k.page_reporting.reported_pages, 0);
        assert!(!k.fr.has(x, pg::DISCARDED));
    }
}
