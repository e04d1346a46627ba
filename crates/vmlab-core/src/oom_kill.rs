//! The OOM killer (`mm/oom_kill.c`): pick the process with the largest footprint (RSS + swap
//! entries + page tables, the `oom_badness` points) and kill it. The scheduler ends the victim's
//! tasks and `exit_mmap` frees its memory.

use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// Returns true if a victim was chosen.
pub fn out_of_memory(k: &mut Kernel, ctx: &mut Ctx) -> bool {
    select_and_kill(k, ctx, crate::memcontrol::ROOT)
}

/// The OOM killer of a memory cgroup at its limit (`mem_cgroup_out_of_memory`): only processes
/// of group `g` and its descendants are candidates.
pub fn out_of_memory_memcg(k: &mut Kernel, ctx: &mut Ctx, g: u8) -> bool {
    select_and_kill(k, ctx, g)
}

fn select_and_kill(k: &mut Kernel, ctx: &mut Ctx, g: u8) -> bool {
    k.charge(ctx, KFunc::OutOfMemory, k.cost.syscall * 10);
    let mut best: Option<(u64, u32)> = None;
    for m in k.mms.iter().flatten() {
        if k.oom_killed.contains(&m.id) || m.name.starts_with('[') || !k.memcg.is_descendant(m.memcg, g) {
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

/// Back-off when an allocation failed and the OOM killer is at work.
const OOM_BACKOFF_NS: u64 = 10_000_000;

/// How long a task whose allocation failed waits before retrying: until writeback wakes it
/// when reclaim throttled, else a short back-off while the OOM killer's victim exits.
pub fn alloc_retry_at(ctx: &mut Ctx) -> u64 {
    let t = std::mem::take(&mut ctx.throttle_until);
    if t > ctx.clock() {
        t
    } else {
        ctx.clock() + OOM_BACKOFF_NS
    }
}
