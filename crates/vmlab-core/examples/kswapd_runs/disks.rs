//! The `sd` line (every sample, per interval): each disk's requests and how long they took, so a
//! swap-on run can say how busy the swap disk was and how long a page reclaim wrote to it stayed
//! under writeback — the time in which kswapd meets it again and keeps it (2.6.36's
//! `shrink_page_list`: PG_writeback → `keep_locked`, counted nowhere; the `fp` line's writeback
//! column). Per disk: reads and writes completed (after merging) and their mean latency, queueing
//! included (`/sys/block/DEV/stat`'s ticks ÷ requests), and the share of the interval with a
//! request in flight (`io_ticks`); then the swap traffic of the interval (`pswpout`, `pswpin`)
//! and the pages under writeback at the sample. Read at the sample only: the run is the same with
//! or without it.
use vmlab_core::disk::{DiskStat, DiskTimes};
use vmlab_core::sim::Sim;
use vmlab_core::stats::vmstat::Vm;

pub struct Disks {
    names: Vec<String>,
    prev: Vec<(DiskStat, DiskTimes)>,
    prev_swap: [u64; 2],
    prev_ns: u64,
}

impl Disks {
    pub fn new(sim: &Sim) -> Disks {
        let mut names = vec![String::new(); sim.k.disks.len()];
        for (name, &d) in &sim.disk_ids {
            names[d] = name.clone();
        }
        Disks { names, prev: vec![Default::default(); sim.k.disks.len()], prev_swap: [0; 2], prev_ns: sim.s.now }
    }

    pub fn header() -> String {
        "sd t_h | per disk (* holds the swap area): reads / writes completed, mean read / write latency ms, busy % \
         | pswpout pswpin in the interval, pages under writeback at the sample"
            .to_string()
    }

    pub fn line(&mut self, sim: &Sim) -> String {
        let now = sim.s.now;
        let span = (now - self.prev_ns).max(1);
        let swap_disk = sim.k.swap.as_ref().map(|s| s.disk);
        let mut out = format!("sd {:.1}", now as f64 / 3.6e12);
        for (d, disk) in sim.k.disks.iter().enumerate() {
            let (st, tm) = (disk.stat(), disk.times(now));
            let (ps, pt) = self.prev[d];
            let (r, w) = (st.read_ios - ps.read_ios, st.write_ios - ps.write_ios);
            let mean = |ticks: u64, n: u64| if n == 0 { 0.0 } else { ticks as f64 / n as f64 };
            out += &format!(
                " | {}{} {} / {} {:.1} / {:.1} ms {:.1}%",
                self.names[d],
                if swap_disk == Some(d) { "*" } else { "" },
                r,
                w,
                mean(tm.read_ticks - pt.read_ticks, r),
                mean(tm.write_ticks - pt.write_ticks, w),
                (tm.io_ticks - pt.io_ticks) as f64 * 1e8 / span as f64
            );
            self.prev[d] = (st, tm);
        }
        let swap = [sim.k.ev.get(Vm::Pswpout), sim.k.ev.get(Vm::Pswpin)];
        out += &format!(" | {} {} {}", swap[0] - self.prev_swap[0], swap[1] - self.prev_swap[1], sim.k.g.writeback);
        self.prev_swap = swap;
        self.prev_ns = now;
        out
    }
}
