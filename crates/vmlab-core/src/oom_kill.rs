//! The OOM killer (`mm/oom_kill.c`): pick the process with the largest footprint (RSS + swap
//! entries + page tables, the `oom_badness` points) and kill it. The scheduler ends the victim's
//! tasks and `exit_mmap` frees its memory.

use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// Returns true if a victim was chosen.
pub fn out_of_memory(k: &mut Kernel, ctx: &mut Ctx) -> bool {
    k.charge(ctx, KFunc::OutOfMemory, k.cost.syscall * 10);
    let mut best: Option<(u64, u32)> = None;
    for m in k.mms.iter().flatten() {
        if k.oom_killed.contains(&m.id) || m.name.starts_with('[') {
            continue;
        }
        let points = m.rss_anon + m.rss_file + m.rss_shmem + m.ptes.len() as u64;
        if points > 0 && best.map(|(b, _)| points > b).unwrap_or(true) {
            best = Some((points, m.id));
        }
    }
    let Some((_, victim)) = best else { return false };
    k.oom_killed.push(victim);
    k.ev.inc(Vm::OomKill);
    if ctx.mm == Some(victim) {
        ctx.oom_victim = true;
    }
    true
}
