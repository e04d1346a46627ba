use super::*;
use crate::machine::MachineConfig;
use crate::mm_types::pg;
use crate::mmzone::{Mt, ZoneType};
use crate::page_writeback::{set_page_dirty, submit_write};

const MS: u64 = 1_000_000;

/// A kernel of the default row (6.8) with one ssd that is a loop device, and `n` dirty pages
/// of a file on it: the kernel, the file and the pages.
fn loop_kernel(n: u64) -> (Kernel, u32, Vec<Pfn>) {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 16)]);
    let mut k =
        Kernel::new(crate::profiles::find(crate::profiles::DEFAULT_PROFILE).expect("profile"), cfg, 1).expect("kernel");
    let mut d = crate::disk::Disk::preset("ssd").expect("preset");
    d.loop_worker = true;
    k.disks.push(d);
    k.loops.devs.resize_with(1, Default::default);
    k.loops.devs[0].task = 7;
    let mut ctx = Ctx::default();
    let file = k.file_create("f", 1 << 30, 0, false);
    let mut pages = Vec::new();
    for idx in 0..n {
        let p = k.rmqueue(0, 0, Mt::Movable).expect("a free page");
        k.fr.set(p, pg::UPTODATE);
        k.add_to_page_cache(&mut ctx, file, idx, p);
        set_page_dirty(&mut k, &ctx, p);
        pages.push(p);
    }
    (k, file, pages)
}

#[test]
fn a_loop_write_completes_at_the_workers_submission_plus_the_backing_service() {
    let (mut k, file, pages) = loop_kernel(64);
    let reference = k.disks[0].clone();
    let mut ctx = Ctx { now: MS, task: 3, ..Ctx::default() };
    submit_write(&mut k, &mut ctx, file, 0, pages.clone());
    assert_eq!(k.loops.queued(0), 1, "the request waits on the worker's list");
    assert!(k.io_queue.is_empty(), "no completion before the worker has submitted it");
    assert_eq!(k.loops.wakes, vec![(MS, 7)], "the worker is woken at the request's issue");
    assert_eq!(k.g.writeback, 64);
    // The worker gets a CPU 4 ms later.
    let mut w = Ctx { now: 5 * MS, task: 7, ..Ctx::default() };
    let out = loop_process_work(&mut k, &mut w, 0);
    assert_eq!(out, Outcome::Block { until: None, io: false }, "asleep once the list is empty");
    assert_eq!(k.loops.queued(0), 0);
    let mut backing = reference.clone();
    let expect = backing.submit_segs(5 * MS + k.cost.io_submit, 0, 64 * 4096, 64, true);
    let mut at_issue = reference;
    let direct = at_issue.submit_segs(MS, 0, 64 * 4096, 64, true);
    let writes: Vec<(u64, usize)> = k
        .io_queue
        .iter()
        .filter_map(|(t, d)| match d {
            IoDone::Write { pages, .. } => Some((*t, pages.len())),
            _ => None,
        })
        .collect();
    assert_eq!(writes, vec![(expect, 64)], "the worker's clock after its submission plus the device's service");
    assert!(expect > direct + 3 * MS, "{expect} against {direct} had it gone to the device at its issue");
    assert_eq!(w.sys_ns, k.cost.io_submit, "lo_rw_aio's submission on the worker's CPU");
}

#[test]
fn the_worker_takes_only_what_was_issued_by_its_clock() {
    let (mut k, file, pages) = loop_kernel(8);
    let mut ctx = Ctx { now: 10 * MS, ..Ctx::default() };
    submit_write(&mut k, &mut ctx, file, 0, pages);
    let mut w = Ctx { now: 2 * MS, task: 7, ..Ctx::default() };
    let out = loop_process_work(&mut k, &mut w, 0);
    assert_eq!(out, Outcome::Block { until: Some(10 * MS), io: false }, "it sleeps until the issue");
    assert_eq!(k.loops.queued(0), 1);
    assert_eq!(w.sys_ns, 0);
}

#[test]
fn an_io_end_is_released_once_put_and_its_last_bio_submitted() {
    let (mut k, _file, pages) = loop_kernel(4);
    k.cost.end_writeback = 0;
    let n = k.loops.open_io_end(0);
    let ctx = Ctx { now: MS, ..Ctx::default() };
    queue_cmd(&mut k, &ctx, 0, 0, 2 * 4096, 2, LoopEnd::IoEnd(n));
    queue_cmd(&mut k, &ctx, 0, 2 * 4096, 2 * 4096, 2, LoopEnd::IoEnd(n));
    put_io_end(&mut k, n, 2 * MS, pages, &[2, 2]);
    assert!(k.releases.spans().next().is_none(), "two bios still on the worker's list");
    let mut w = Ctx { now: 3 * MS, task: 7, ..Ctx::default() };
    loop_process_work(&mut k, &mut w, 0);
    let last = k
        .io_queue
        .iter()
        .filter(|(_, d)| matches!(d, IoDone::Write { .. }))
        .map(|&(t, _)| t)
        .max()
        .expect("the bios' interrupts");
    let spans: Vec<(usize, u64, u64)> = k.releases.spans().collect();
    assert_eq!(spans, vec![(0, last, last)], "released at its last bio's completion");
}

/// dirty-writer's shape on one ssd that is a loop device: `hogs` processes computing beside
/// a writer of 8 MiB and its fsync, on two CPUs. The time the worker's list head waited for it
/// and the commands it submitted.
fn waited(hogs: u32) -> (u64, u64) {
    let hog = if hogs == 0 {
        String::new()
    } else {
        format!("[[process]]\nname = \"hog\"\ncount = {hogs}\nprogram = \"compute 200ms\"\n")
    };
    // The default row: the worker needs 6.x's request queue, whichever row that is.
    let profile = crate::profiles::DEFAULT_PROFILE;
    let text = format!(
        r#"
name = "loop-wait"
profile = "{profile}"
[machine]
memory = "512MiB"
cpus = 2
[[disk]]
name = "sda"
model = "ssd"
loop_worker = true
[[file]]
name = "out"
size = "0"
{hog}[[process]]
name = "w"
program = """
write out len=8MiB bs=1MiB
fsync out
mark done
"""
"#
    );
    let sc = crate::workload::load_scenario_str("loop-wait.toml", &text, &[]).expect("scenario");
    let prof = crate::sim::resolve_profile(&sc, None).expect("profile");
    let mut sim = crate::sim::Sim::new(&sc, prof).expect("sim");
    sim.run().expect("run");
    // The fsync waited for the worker to drain its list, then for the last completion, and
    // returned: a wake given while the writer was still in its quantum is not lost.
    assert!(sim.elapsed_ns() < 5_000_000_000, "the writer finished: {} ns", sim.elapsed_ns());
    let dev = &sim.k.loops.devs[0];
    assert_eq!(sim.k.g.writeback, 0, "every write ended");
    assert_eq!(dev.cmds.len(), 0);
    (dev.waited_ns, dev.submitted)
}

#[test]
fn a_loop_request_waits_for_the_worker_while_the_cpus_are_busy() {
    let (idle, n_idle) = waited(0);
    let (busy, n_busy) = waited(2);
    assert!(n_idle > 0 && n_busy > 0, "the worker submitted {n_idle} / {n_busy} requests");
    eprintln!("head waited: idle {idle} ns over {n_idle} requests, busy {busy} ns over {n_busy}");
    // With a CPU idle the head waits only where the worker's own last quantum (played out at
    // its start) still ran at the next issue: ~20 µs a request.
    assert!(idle < n_idle * 30_000, "an idle CPU takes the worker at once: {idle} ns");
    assert!(
        busy > n_busy * 60_000 && busy > 3 * idle,
        "two computing tasks hold both CPUs: the worker waits for one ({busy} ns)"
    );
}
