//! 6.8's `struct reclaim_stat`, as `mm_vmscan_lru_shrink_inactive` prints it: what each batch's
//! folios were when limit reclaim reached them (`shrink_folio_list` in mm/vmscan.c). The
//! events add up to the run's counters, and a writer's dirty pages under a v1 limit show up
//! as dirty, under writeback and activated — the census issue 17's dirty-writer needed.

use std::any::Any;

use vmlab_core::api::{self, RunOpts};
use vmlab_core::kernel::Kernel;
use vmlab_core::trace::{ReclaimStat, Tracepoint, Tracer};

use crate::memcg::DIRTY;

/// The stats of every file batch, summed, with the pages scanned.
#[derive(Default)]
struct Census {
    sum: ReclaimStat,
    scanned: u64,
    all_unqueued: u64,
}

impl Tracer for Census {
    fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
        if let Tracepoint::LruShrinkInactive { nr_scanned, stat: s, file: true, .. } = *ev {
            self.sum += s;
            self.scanned += nr_scanned;
            if nr_scanned > 0 && s.nr_unqueued_dirty == nr_scanned {
                self.all_unqueued += 1;
            }
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[test]
fn limit_reclaim_batches_say_what_they_met() {
    let sc = vmlab_core::workload::load_scenario_str("census.toml", DIRTY, &[]).expect("loads");
    let (r, sim) =
        api::run(&sc, RunOpts { tracers: vec![Box::new(Census::default())], ..Default::default() }).expect("runs");
    let c = sim.k.tracer::<Census>().expect("attached");
    let s = c.sum;
    assert_eq!(c.scanned, r.counter("pgscan_file"), "the file batches are every file page scanned");
    // Nothing anon is scanned here, so every activation is a file page's.
    assert_eq!(r.counter("pgscan_anon"), 0);
    assert_eq!(s.nr_activate[1], r.counter("pgactivate"), "the batches' activations are pgactivate");
    // A dirty page met by limit reclaim is left to the flusher and counted once.
    assert!(s.nr_unqueued_dirty > 0, "reclaim met dirty pages not yet under writeback");
    assert_eq!(s.nr_unqueued_dirty, r.counter("nr_vmscan_immediate_reclaim"));
    assert!(s.nr_writeback > 0, "reclaim met pages under writeback and marked them (case 2)");
    assert_eq!(s.nr_immediate, 0, "case 1 is kswapd's; this reclaim is the group's");
    assert!(s.nr_dirty >= s.nr_unqueued_dirty + s.nr_writeback, "dirty or under writeback covers both");
    // The file is written, never read or mapped: every activation is one of those two.
    assert_eq!(s.nr_activate[1], s.nr_unqueued_dirty + s.nr_writeback);
    assert!(c.all_unqueued > 0, "some batches were all dirty and unqueued: the flusher's wakeups");
}

/// The pages pgsteal_file counts and the activations of the census, for a writer whose every
/// page costs `perform_write` more (vmlab's own table: nothing more).
fn stolen_and_activated(perform_write: Option<&str>) -> (u64, u64) {
    let sets: Vec<String> = perform_write.iter().map(|c| format!("machine.cost.perform_write={c}")).collect();
    let sc = vmlab_core::workload::load_scenario_str("pace.toml", DIRTY, &sets).expect("loads");
    let (r, sim) =
        api::run(&sc, RunOpts { tracers: vec![Box::new(Census::default())], ..Default::default() }).expect("runs");
    let c = sim.k.tracer::<Census>().expect("attached");
    (r.counter("pgsteal_file"), c.sum.nr_activate[1])
}

/// Whether limit reclaim meets the writer's pages under writeback is a race between the writer
/// and the disk (issue 17's dirty-writer, dirty18/dirty19): a reclaimer that finds no clean page
/// at the tail goes down the priorities through the whole writeback front, marking and
/// activating it (`shrink_folio_list` case 2), and those pages come back clean at the tail when
/// their writes end (`folio_end_writeback` → `folio_rotate_reclaimable`). A writer that spends
/// longer on each page than the disk takes to turn a batch of requests round leaves the next
/// batch to finish in place, unmarked, and reclaim takes it clean without activating it.
#[test]
fn a_slower_writer_leaves_its_writes_to_finish_in_place() {
    let (fast_stolen, fast_activated) = stolen_and_activated(None);
    let (slow_stolen, slow_activated) = stolen_and_activated(Some("8us"));
    assert!(fast_stolen > 0 && slow_stolen > 0);
    assert!(
        fast_activated >= fast_stolen,
        "a writer faster than the disk: every page stolen was met under writeback first ({fast_activated} of {fast_stolen})"
    );
    assert!(
        slow_activated * 2 < slow_stolen,
        "a slower writer: most pages finish writeback before reclaim reaches them ({slow_activated} of {slow_stolen})"
    );
}
