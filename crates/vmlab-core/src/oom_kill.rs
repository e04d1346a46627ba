//! The OOM killer (`mm/oom_kill.c`): pick the process with the largest footprint (RSS + swap
//! entries + page tables, the `oom_badness` points) and kill it. The scheduler ends the victim's
//! tasks and `exit_mmap` frees its memory.

use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// What one call of the OOM killer did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Oom {
    /// A victim was chosen and killed now.
    Killed,
    /// A victim chosen before still holds its memory, so no one else is killed.
    Waiting,
    /// Nothing could be killed.
    NoVictim,
}

/// Returns true if a victim was chosen, or one chosen before still holds its memory (the caller
/// retries the allocation later).
pub fn out_of_memory(k: &mut Kernel, ctx: &mut Ctx) -> bool {
    select_and_kill(k, ctx, crate::memcontrol::ROOT) != Oom::NoVictim
}

/// The OOM killer of a memory cgroup at its limit (`mem_cgroup_out_of_memory`): only processes
/// of group `g` and its descendants are candidates.
pub fn out_of_memory_memcg(k: &mut Kernel, ctx: &mut Ctx, g: u8) -> Oom {
    select_and_kill(k, ctx, g)
}

fn select_and_kill(k: &mut Kernel, ctx: &mut Ctx, g: u8) -> Oom {
    k.charge(ctx, KFunc::OutOfMemory, k.cost.syscall * 10);
    let mut best: Option<(u64, u32)> = None;
    for m in k.mms.iter().flatten() {
        if m.name.starts_with('[') || !k.memcg.is_descendant(m.memcg, g) {
            continue;
        }
        if m.oom_victim {
            if k.profile.oom_waits_for_victim {
                // Another victim would be one too many: the first one's memory is on its way
                // back (its exit, or 6.8's oom reaper).
                return Oom::Waiting;
            }
            continue;
        }
        let points = m.rss_anon + m.rss_file + m.rss_shmem + m.ptes.len() as u64;
        if points > 0 && best.map(|(b, _)| points > b).unwrap_or(true) {
            best = Some((points, m.id));
        }
    }
    let Some((_, victim)) = best else { return Oom::NoVictim };
    mark_oom_victim(k, victim);
    k.ev.inc(Vm::OomKill);
    if ctx.mm == Some(victim) {
        ctx.oom_victim = true;
    }
    Oom::Killed
}

/// `mark_oom_victim`: queue the process for the scheduler to end (`reap_oom_victims`) and
/// remember it as a victim until its memory is freed.
pub fn mark_oom_victim(k: &mut Kernel, mm: u32) {
    k.mm_mut(mm).oom_victim = true;
    k.oom_killed.push(mm);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    fn kernel(oom_waits_for_victim: bool) -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 8192)]);
        let p = crate::profiles::Profile { oom_waits_for_victim, ..crate::profiles::default_row() };
        Kernel::new(p, cfg, 1).expect("kernel")
    }

    /// Two processes, the first killed and still holding its memory (its tasks not yet ended):
    /// a second OOM call kills nobody with `oom_waits_for_victim` (2.6/6.8: the victim aborts
    /// the scan) and the other process without it (2.4.9, whose `oom_kill` knows no victim in
    /// progress).
    #[test]
    fn a_second_call_waits_for_the_victim_where_the_era_does() {
        for waits in [true, false] {
            let profile = format!("oom_waits_for_victim {waits}");
            let mut k = kernel(waits);
            let mut ctx = Ctx::default();
            let big = k.mm_create(&mut ctx, "big").expect("pgd");
            let small = k.mm_create(&mut ctx, "small").expect("pgd");
            k.mm_mut(big).rss_anon = 3000;
            k.mm_mut(small).rss_anon = 1000;
            assert!(out_of_memory(&mut k, &mut ctx), "{profile}: a first victim");
            assert_eq!(std::mem::take(&mut k.oom_killed), vec![big], "{profile}: the largest first");
            assert!(out_of_memory(&mut k, &mut ctx), "{profile}: the second call reports progress");
            let second = std::mem::take(&mut k.oom_killed);
            assert_eq!(second, if waits { vec![] } else { vec![small] }, "{profile}: the second call");
            assert_eq!(k.ev.get(Vm::OomKill), if waits { 1 } else { 2 }, "{profile}: oom_kill");
            // The victim's exit (exit_mmap) ends the wait: the next call may choose again.
            k.mms[big as usize] = None;
            if waits {
                assert!(out_of_memory(&mut k, &mut ctx));
                assert_eq!(k.oom_killed, vec![small], "{profile}: after the victim exited");
            }
        }
    }
}
