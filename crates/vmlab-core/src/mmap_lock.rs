//! mmap_sem (`mmap_lock` since 5.8) around user page faults and address-space changes, and the
//! three fault-locking policies the profile's `fault_locking` chooses between. What a fault does
//! with its lock while the page it needs is under I/O is exactly what differs between eras:
//! - `HoldAcrossIo` (2.6.26 and before): `filemap_fault` sleeps in `lock_page` holding mmap_sem
//!   for read, so a writer (mmap, munmap, mlock) queued behind it waits for the disk too.
//! - `Retry` (2.6.37+, FAULT_FLAG_ALLOW_RETRY): the fault drops mmap_sem, waits for the page,
//!   and retries once under it with FAULT_FLAG_TRIED (the retry may not drop it again).
//! - `PerVma` (6.4+): `lock_vma_under_rcu` first — the VMA's own lock, dropped for the wait —
//!   falling back to mmap_sem when a writer has the VMA write-locked or after a retry.
//!
//! The lock state a task holds across quanta lives in its `sched::Task` (`MmapLockState`).

use crate::kernel::{Ctx, Kernel};
use crate::memory::Fault;
use crate::mmap::{pte, PTRS_PER_TABLE};
use crate::profiles::FaultLocking;
use crate::sched::{Outcome, QUANTUM_NS};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// What one task holds of its mm's mmap_sem, and where its fault in progress stands.
#[derive(Clone, Debug, Default)]
pub struct MmapLockState {
    /// mmap_sem held for read across a fault's I/O wait (hold_across_io), or granted while queued.
    pub holds_read: bool,
    pub holds_write: bool,
    /// The fault in progress already dropped its lock once to wait for I/O (FAULT_FLAG_TRIED).
    pub fault_tried: bool,
    /// The last fault attempt slept inside `handle_mm_fault` holding mmap_sem (one kernel call).
    pub slept_holding: bool,
    /// The page whose fault last blocked on I/O (its next fault is a retry).
    pub waited_vpn: Option<u64>,
}

/// How a user access ended.
pub enum FaultStep {
    Done,
    Block(Outcome),
    Segv,
    Oom,
}

/// `mmap_write_lock`: `None` when taken, else the task blocks (the grant wakes it holding it).
pub fn mmap_write_lock(k: &mut Kernel, t: usize, ctx: &mut Ctx, lk: &mut MmapLockState, mm: u32) -> Option<Outcome> {
    if lk.holds_write {
        return None;
    }
    lk.holds_write = true;
    if k.mm_mut(mm).mmap_sem.down_write(t, ctx.clock()) {
        None
    } else {
        k.charge(ctx, KFunc::RwsemDownWrite, k.cost.lock_handoff);
        Some(Outcome::Block { until: None, io: false })
    }
}

/// `mmap_write_unlock`: also ends every VMA write lock taken under it (`vma_end_write_all`).
pub fn mmap_write_unlock(k: &mut Kernel, now: u64, lk: &mut MmapLockState, mm: u32) {
    if lk.holds_write {
        lk.holds_write = false;
        let mut g = std::mem::take(&mut k.wakeups);
        let m = k.mm_mut(mm);
        if let Some((lo, hi)) = m.vma_write_locks.take() {
            let a = m.vmas.partition_point(|v| v.end <= lo);
            let b = m.vmas.partition_point(|v| v.start < hi);
            for v in &mut m.vmas[a..b.max(a)] {
                v.write_locked = false;
            }
        }
        m.mmap_sem.up_write(&mut g, now);
        k.wakeups = g;
    }
}

pub fn mmap_read_unlock(k: &mut Kernel, now: u64, lk: &mut MmapLockState, mm: u32) {
    if lk.holds_read {
        lk.holds_read = false;
        let mut g = std::mem::take(&mut k.wakeups);
        k.mm_mut(mm).mmap_sem.up_read(&mut g, now);
        k.wakeups = g;
    }
}

/// A task killed while it sleeps (`kill_task`, before it exits). One queued on mmap_sem leaves
/// the queue holding nothing: its `holds_*` flag said "granted on wake-up", and left set, its
/// exit would release the lock of whoever holds it. One already granted (the release that woke
/// it took it off the queue) holds the lock and drops it on its way out, as 6.x's slowpaths
/// return the lock when the grant came before the signal. Only rows whose `mmap_sem_killable`
/// says so get here for a queued waiter (6.x's `mmap_read_lock_killable`,
/// `mmap_write_lock_killable`); 2.4's and 2.6's waiters stay queued (`kill_task`).
pub fn mmap_lock_killed(k: &mut Kernel, t: usize, now: u64, lk: &mut MmapLockState, mm: u32) {
    let mut g = std::mem::take(&mut k.wakeups);
    match k.mm_mut(mm).mmap_sem.cancel(t, &mut g, now) {
        Some(true) => lk.holds_write = false,
        Some(false) => lk.holds_read = false,
        None => {}
    }
    k.wakeups = g;
}

/// A task leaving (exit, OOM kill) drops whatever it holds.
pub fn mmap_lock_release(k: &mut Kernel, ctx: &Ctx, lk: &mut MmapLockState, mm: u32) {
    mmap_read_unlock(k, ctx.clock(), lk, mm);
    mmap_write_unlock(k, ctx.clock(), lk, mm);
}

/// A user access that may fault (x86 `do_page_fault` / `do_user_addr_fault`), locked as the
/// profile's `fault_locking` says.
pub fn do_user_addr_fault(
    k: &mut Kernel,
    t: usize,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    vpn: u64,
    write: bool,
) -> FaultStep {
    ctx.fault_tried = lk.waited_vpn == Some(vpn);
    ctx.fault_resumed = std::mem::take(&mut lk.slept_holding) && ctx.fault_tried;
    ctx.alloc_refused = false;
    let r = fault_locked(k, t, ctx, lk, mm, vpn, write);
    ctx.fault_tried = false;
    ctx.fault_resumed = false;
    lk.waited_vpn = match r {
        FaultStep::Block(Outcome::Block { io: true, .. }) => Some(vpn),
        FaultStep::Block(_) => lk.waited_vpn,
        _ => None,
    };
    r
}

/// The fault handler's `out_of_memory:` label of eras whose allocator can refuse a user page
/// (`fault_oom_kills`): the faulting process dies, whatever its size (2.4 has no victim
/// selection here, so a small process that faults at the wrong moment goes first). Only a user
/// access gets here: mlock's `get_user_pages` returns the error instead.
pub fn out_of_memory_kill_current(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
    if !k.mm(mm).oom_victim {
        crate::oom_kill::mark_oom_victim(k, mm);
        k.ev.inc(Vm::OomKill);
    }
    ctx.oom_victim = true;
}

fn io_wait(until: u64) -> FaultStep {
    FaultStep::Block(Outcome::Block { until: Some(until), io: true })
}

fn to_step(r: Fault) -> FaultStep {
    match r {
        Fault::Done => FaultStep::Done,
        Fault::Segv => FaultStep::Segv,
        Fault::Oom => FaultStep::Oom,
        Fault::Wait { until, .. } => io_wait(until),
    }
}

/// User time of an access whose PTE allows it: no fault, the hardware sets the accessed and
/// dirty bits.
const PTE_HIT_NS: u64 = 2;

/// Whether PTE `e` allows the access without a fault.
#[inline]
fn pte_allows(e: u32, write: bool) -> bool {
    pte::present(e) && (!write || e & pte::WRITE != 0)
}

/// The accesses to `vpn`, `vpn + stride`, … (`n` at most) that need no fault, made as
/// `do_user_addr_fault` makes each one: it stops at the first page whose PTE does not allow the
/// access, or when the quantum is spent (the interpreter's check before every access). Returns
/// how many were made. The page table is found once per table rather than once per page.
#[allow(clippy::too_many_arguments)]
pub fn access_present_run(
    k: &mut Kernel,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    vpn: u64,
    n: u64,
    stride: u64,
    write: bool,
) -> u64 {
    if lk.holds_read {
        return 0;
    }
    let set = pte_hit_bits(write);
    let budget = hits_left(ctx, n);
    let mut done = 0;
    'tables: while done < budget {
        let v = vpn + done * stride;
        let Some(slot) = k.pte_slot(mm, v) else { break };
        let in_table = ((PTRS_PER_TABLE - 1 - (v % PTRS_PER_TABLE)) / stride + 1).min(budget - done);
        let ptes = &mut k.pt.entries[slot..];
        for j in 0..in_table as usize {
            let e = &mut ptes[j * stride as usize];
            if !pte_allows(*e, write) {
                done += j as u64;
                break 'tables;
            }
            *e |= set;
        }
        done += in_table;
    }
    hits_made(ctx, lk, done);
    done
}

/// `access_present_run` for pages `base + pages[0]`, `base + pages[1]`, … in that order.
pub fn access_present_pages(
    k: &mut Kernel,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    base: u64,
    pages: &[u64],
    write: bool,
) -> usize {
    if lk.holds_read {
        return 0;
    }
    let set = pte_hit_bits(write);
    let budget = hits_left(ctx, pages.len() as u64) as usize;
    let mut done = 0;
    for &p in &pages[..budget] {
        let Some(slot) = k.pte_slot(mm, base + p) else { break };
        let e = &mut k.pt.entries[slot];
        if !pte_allows(*e, write) {
            break;
        }
        *e |= set;
        done += 1;
    }
    hits_made(ctx, lk, done as u64);
    done
}

/// The bits the hardware sets in the PTE of an access that needs no fault.
#[inline]
fn pte_hit_bits(write: bool) -> u32 {
    pte::YOUNG | if write { pte::DIRTY } else { 0 }
}

/// How many of `n` accesses without a fault fit before the quantum is spent: the interpreter
/// makes one only while `sys_ns + user_ns < QUANTUM_NS`.
#[inline]
fn hits_left(ctx: &Ctx, n: u64) -> u64 {
    QUANTUM_NS.saturating_sub(ctx.sys_ns + ctx.user_ns).div_ceil(PTE_HIT_NS).min(n)
}

/// What `done` accesses without a fault leave behind, as `do_user_addr_fault` leaves each.
#[inline]
fn hits_made(ctx: &mut Ctx, lk: &mut MmapLockState, done: u64) {
    if done > 0 {
        ctx.user_ns += done * PTE_HIT_NS;
        ctx.alloc_refused = false;
        lk.slept_holding = false;
        lk.waited_vpn = None;
    }
}

fn fault_locked(
    k: &mut Kernel,
    t: usize,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    vpn: u64,
    write: bool,
) -> FaultStep {
    // A present PTE that allows the access: no fault, the hardware sets the accessed/dirty bits.
    if !lk.holds_read {
        if let Some(slot) = k.pte_slot(mm, vpn) {
            let e = k.pt.entries[slot];
            if pte_allows(e, write) {
                k.pt.entries[slot] = e | pte_hit_bits(write);
                ctx.user_ns += PTE_HIT_NS;
                return FaultStep::Done;
            }
        }
    }
    let policy = k.profile.fault_locking;
    if policy == FaultLocking::PerVma && !lk.holds_read && !lk.fault_tried {
        if let Some(r) = lock_vma_under_rcu(k, ctx, lk, mm, vpn, write) {
            return r;
        }
    }
    if !lk.holds_read {
        lk.holds_read = true;
        if !k.mm_mut(mm).mmap_sem.down_read(t, ctx.clock()) {
            k.charge(ctx, KFunc::RwsemDownRead, k.cost.lock_handoff);
            return FaultStep::Block(Outcome::Block { until: None, io: false });
        }
    }
    match k.handle_mm_fault(ctx, mm, vpn, write) {
        Fault::Wait { until, .. } => {
            if releases_for_io(policy) && !lk.fault_tried {
                mmap_read_unlock(k, ctx.clock(), lk, mm);
                lk.fault_tried = true;
                k.ev.inc(Vm::MinorFaultRetry);
            } else {
                k.mm_mut(mm).mmap_sem.stats.io_waits_holding += 1;
                lk.slept_holding = true;
            }
            io_wait(until)
        }
        other => {
            mmap_read_unlock(k, ctx.clock(), lk, mm);
            lk.fault_tried = false;
            to_step(other)
        }
    }
}

/// Whether a fault under mmap_sem drops it to wait for I/O (FAULT_FLAG_ALLOW_RETRY) the first
/// time, or sleeps holding it.
fn releases_for_io(policy: FaultLocking) -> bool {
    match policy {
        FaultLocking::HoldAcrossIo => false,
        FaultLocking::Retry | FaultLocking::PerVma => true,
    }
}

/// The per-VMA attempt: `None` when the VMA is missing or write-locked (the fault falls back to
/// mmap_sem, counted as an abort), else the fault's result under the VMA lock; an I/O wait drops
/// that lock and the retry goes under mmap_sem.
fn lock_vma_under_rcu(
    k: &mut Kernel,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    vpn: u64,
    write: bool,
) -> Option<FaultStep> {
    match k.find_vma(mm, vpn) {
        Some(i) if !k.mm(mm).vmas[i].write_locked => Some(match k.handle_mm_fault(ctx, mm, vpn, write) {
            Fault::Wait { until, .. } => {
                k.ev.inc(Vm::VmaLockRetry);
                lk.fault_tried = true;
                io_wait(until)
            }
            other => {
                k.ev.inc(Vm::VmaLockSuccess);
                to_step(other)
            }
        }),
        _ => {
            k.ev.inc(Vm::VmaLockAbort);
            None
        }
    }
}

/// `vma_start_write`: under per-VMA locking a VMA created under mmap_sem is write-locked until
/// `mmap_write_unlock`, so a fault on it cannot take the VMA lock meanwhile.
pub fn new_vma_write_locked(k: &Kernel) -> bool {
    k.profile.fault_locking == FaultLocking::PerVma
}

/// `vma_start_write` on an existing VMA, under mmap_sem held for write: under per-VMA locking a
/// fault on it falls back to mmap_sem (and so waits for the writer) until `mmap_write_unlock`.
/// `dup_mmap` takes it on each of the parent's VMAs as it reaches them.
pub fn vma_start_write(k: &mut Kernel, mm: u32, i: usize) {
    if k.profile.fault_locking != FaultLocking::PerVma {
        return;
    }
    let m = k.mm_mut(mm);
    let v = &mut m.vmas[i];
    if !v.write_locked {
        v.write_locked = true;
        let (lo, hi) = m.vma_write_locks.unwrap_or((v.start, v.end));
        m.vma_write_locks = Some((lo.min(v.start), hi.max(v.end)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    /// One kernel per row: the rows differ in the rwsem's wake-up rule and the fault's locking.
    fn kernels() -> Vec<(Kernel, u32)> {
        crate::profiles::all()
            .into_iter()
            .map(|p| {
                let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 4096)]);
                let mut k = Kernel::new(p, cfg, 1).expect("kernel");
                let mm = k.mm_create(&mut Ctx::default(), "p").expect("pgd");
                (k, mm)
            })
            .collect()
    }

    /// What `kill_task` then `do_exit` do to a task's lock state.
    fn kill(k: &mut Kernel, t: usize, lk: &mut MmapLockState, mm: u32) {
        mmap_lock_killed(k, t, 0, lk, mm);
        mmap_lock_release(k, &Ctx::default(), lk, mm);
    }

    /// Task 1 holds mmap_sem for write; task 2 waits to write, task 3 (a fault where no VMA is,
    /// so it goes to mmap_sem) to read. Killing the waiters must leave task 1's lock held and
    /// the queue holding only those still waiting; task 1's release then grants no dead task.
    #[test]
    fn a_killed_waiter_leaves_the_holders_lock_held() {
        for (mut k, mm) in kernels() {
            let mut ctx = Ctx::default();
            let mut lk = [MmapLockState::default(), MmapLockState::default(), MmapLockState::default()];
            assert!(mmap_write_lock(&mut k, 1, &mut ctx, &mut lk[0], mm).is_none());
            assert!(mmap_write_lock(&mut k, 2, &mut ctx, &mut lk[1], mm).is_some(), "the writer waits");
            let far = 1 << 30;
            assert!(matches!(do_user_addr_fault(&mut k, 3, &mut ctx, &mut lk[2], mm, far, false), FaultStep::Block(_)));
            assert_eq!(k.mm(mm).mmap_sem.waiters.len(), 2);

            kill(&mut k, 2, &mut lk[1], mm);
            let s = &k.mm(mm).mmap_sem;
            assert_eq!(s.writer, Some(1), "the holder keeps its lock");
            assert_eq!(s.waiters.iter().map(|w| w.0).collect::<Vec<_>>(), vec![3]);
            assert!(!lk[1].holds_write && !lk[1].holds_read);

            kill(&mut k, 3, &mut lk[2], mm);
            let s = &k.mm(mm).mmap_sem;
            assert_eq!((s.writer, s.readers, s.waiters.len()), (Some(1), 0, 0));

            k.wakeups.clear();
            mmap_write_unlock(&mut k, 0, &mut lk[0], mm);
            let s = &k.mm(mm).mmap_sem;
            assert_eq!((s.writer, s.readers), (None, 0));
            assert!(k.wakeups.is_empty(), "no dead waiter is granted the lock");
        }
    }

    /// A waiter granted the lock by a release, killed before it runs, holds it: its exit
    /// releases it, and the waiter behind it gets it.
    #[test]
    fn a_waiter_granted_before_the_kill_releases_on_exit() {
        for (mut k, mm) in kernels() {
            let mut ctx = Ctx::default();
            let mut lk = [MmapLockState::default(), MmapLockState::default(), MmapLockState::default()];
            assert!(mmap_write_lock(&mut k, 1, &mut ctx, &mut lk[0], mm).is_none());
            assert!(mmap_write_lock(&mut k, 2, &mut ctx, &mut lk[1], mm).is_some());
            assert!(mmap_write_lock(&mut k, 3, &mut ctx, &mut lk[2], mm).is_some());
            k.wakeups.clear();
            mmap_write_unlock(&mut k, 0, &mut lk[0], mm);
            assert_eq!(k.wakeups, vec![2]);
            assert_eq!(k.mm(mm).mmap_sem.writer, Some(2));

            kill(&mut k, 2, &mut lk[1], mm);
            let s = &k.mm(mm).mmap_sem;
            assert_eq!((s.writer, s.waiters.len()), (Some(3), 0), "the next writer has it");
            assert_eq!(k.wakeups, vec![2, 3]);
        }
    }
}
