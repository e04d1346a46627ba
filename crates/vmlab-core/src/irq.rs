//! Device interrupts. A disk's completion raises a hard interrupt; its handler runs on one CPU
//! (chosen as the profile's `IrqRule` says the interrupt controller delivers it) and the time it
//! takes is stolen from whatever that CPU was running: the task's quantum ends later by as much,
//! and a spinlock it held with interrupts enabled is held longer (the engine's `irq_interrupted` hook).
//! An idle CPU absorbs the handler. The handler is one row of the flat profile, named after the
//! disk's driver, with its calls.
//!
//! Bounce pages being freed (`IoDone::Bounce`) are part of their read's completion, not an
//! interrupt of their own.

use crate::kernel::{IoDone, Kernel};
use crate::mmzone::ZoneType;
use crate::profiles::IrqRule;

/// What completion `d` costs in interrupt context: (disk, ns, whether it is an interrupt of its
/// own). A submission merged into the request before it completes in that request's handler:
/// it adds its bounce copies only. None when the profile models no interrupt time or `d` costs
/// nothing there.
pub fn handler_ns(k: &Kernel, d: &IoDone) -> Option<(usize, u64, bool)> {
    let (pages, disk, read, irq) = match d {
        IoDone::Read { pages, disk, irq } => (pages, *disk, true, *irq),
        IoDone::Write { pages, disk, irq } => (pages, *disk, false, *irq),
        IoDone::Bounce(_) | IoDone::Release { .. } => return None,
    };
    let base = |ns: u64| if irq { ns } else { 0 };
    match k.profile.irq {
        IrqRule::None => None,
        IrqRule::Fixed => {
            // A write's pages end their writeback in the handler of the request that carried
            // them, a merged submission's too (folio_end_writeback per folio).
            let ends = if read { 0 } else { pages.len() as u64 * k.cost.end_writeback };
            let ns = base(k.cost.irq_handler) + ends;
            (ns > 0).then_some((disk, ns, irq))
        }
        IrqRule::LowestPriority24 => {
            // bounce_end_io_read copies each HighMem page out of its bounce page inside the
            // handler (copy_to_high_bh_irq); the unlock of those pages waits for the copies
            // (filemap.rs submit_read), and their CPU time is this. Writes were copied at submit.
            let copies = if read && k.profile.bounce_highmem_io {
                pages.iter().filter(|&&p| k.zones[k.zone_of(p)].kind == ZoneType::HighMem).count() as u64
            } else {
                0
            };
            let ns = base(k.cost.irq_end_request) + copies * k.cost.copy_page;
            (ns > 0).then_some((disk, ns, irq))
        }
    }
}

/// What a completion worker's ends of `d` take: (disk, ns) for an io_end the file system's
/// worker releases (`IoDone::Release`), `end_writeback` a page where the profile times
/// completions (`IrqRule::Fixed`).
pub fn worker_ns(k: &Kernel, d: &IoDone) -> Option<(usize, u64)> {
    match d {
        IoDone::Release { ends, disk } if k.profile.irq == IrqRule::Fixed => {
            let ns = *ends as u64 * k.cost.end_writeback;
            (ns > 0).then_some((*disk, ns))
        }
        _ => None,
    }
}

/// Whether the handler's time counts as the interrupted task's system time. 2.4 accounts CPU
/// time by sampling at the timer tick (`update_process_times` → `update_one_process`: a tick
/// that is not in user mode is `current`'s system time), so a tick inside a handler goes to the
/// task it interrupted, kswapd included. 6.8 (IRQ_TIME_ACCOUNTING) keeps interrupt time apart.
pub fn charged_to_task(rule: IrqRule) -> bool {
    rule == IrqRule::LowestPriority24
}

/// The CPU that takes the `seq`-th interrupt (counted from 0 over the run) of `disk`.
pub fn target_cpu(rule: IrqRule, disk: usize, seq: u64, ncpu: u32) -> u32 {
    let n = ncpu.max(1) as u64;
    match rule {
        // Lowest-priority delivery with equal task priorities: the rotating arbitration ID takes
        // the interrupts round the CPUs.
        IrqRule::LowestPriority24 => (seq % n) as u32,
        // One CPU per IRQ, IRQs spread over the CPUs.
        IrqRule::None | IrqRule::Fixed => (disk as u64 % n) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_priority_goes_round_the_cpus_and_fixed_stays() {
        let r: Vec<u32> = (0..5).map(|s| target_cpu(IrqRule::LowestPriority24, 0, s, 2)).collect();
        assert_eq!(r, vec![0, 1, 0, 1, 0]);
        let f: Vec<u32> = (0..3).map(|s| target_cpu(IrqRule::Fixed, 1, s, 4)).collect();
        assert_eq!(f, vec![1, 1, 1]);
        assert_eq!(target_cpu(IrqRule::Fixed, 5, 0, 4), 1);
    }
}
