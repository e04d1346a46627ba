//! The kernel memory a task costs (`kernel/fork.c`, 2.6.36): `dup_task_struct` takes a
//! `task_struct` from its SLUB cache and a kernel stack of `THREAD_SIZE` from the buddy
//! allocator (`alloc_thread_info`: GFP_KERNEL, order `THREAD_ORDER`); `free_task` gives both
//! back when the task exits. Both are unmovable and live as long as the task, so a server that
//! forks a session per login strews them through memory in step with its page cache.
//!
//! Enabled by a scenario's `[fork]` table; without it tasks cost no kernel memory, as before.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{Pfn, NIL};
use crate::mmzone::Mt;
use crate::page_alloc::Gfp;
use crate::slub::KmemCache;

pub struct TaskMem {
    pub task_struct_cache: KmemCache,
    pub stack_order: u32,
    /// Forks that failed for want of a stack or a task_struct (-ENOMEM).
    pub failed: u64,
}

impl TaskMem {
    pub fn new(stack_order: u32, task_struct: u64, nr_cpus: u64, t: crate::slub::SlubTunables) -> TaskMem {
        TaskMem {
            task_struct_cache: KmemCache::with_tunables("task_struct", task_struct, nr_cpus, Mt::Unmovable, t),
            stack_order,
            failed: 0,
        }
    }
}

/// `dup_task_struct`: (task_struct slab, stack pfn), or None when either allocation failed
/// (what was had is given back, as copy_process's error path does).
pub fn dup_task_struct(k: &mut Kernel, ctx: &mut Ctx) -> Option<(Pfn, Pfn)> {
    let mut tm = k.task_mem.take()?;
    let got = match tm.task_struct_cache.alloc(k, ctx) {
        Some(ts) => match k.alloc_pages(ctx, Gfp::kernel(), tm.stack_order) {
            Ok(st) => {
                k.g.kernel_stack += 1 << tm.stack_order;
                Some((ts, st))
            }
            Err(_) => {
                tm.task_struct_cache.free(k, ctx, ts);
                None
            }
        },
        None => None,
    };
    if got.is_none() {
        tm.failed += 1;
    }
    k.task_mem = Some(tm);
    got
}

/// `free_task`: the stack and the task_struct go back.
pub fn free_task(k: &mut Kernel, ctx: &mut Ctx, mem: (Pfn, Pfn)) {
    if mem.1 == NIL {
        return;
    }
    let Some(mut tm) = k.task_mem.take() else { return };
    k.g.kernel_stack -= 1 << tm.stack_order;
    k.free_pages(ctx, mem.1, tm.stack_order);
    tm.task_struct_cache.free(k, ctx, mem.0);
    k.task_mem = Some(tm);
}
