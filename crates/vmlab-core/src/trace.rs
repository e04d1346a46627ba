//! Tracepoints: events the mm emits where the kernel has a tracepoint (`include/trace/events/
//! kmem.h`, `vmscan.h`), for observers outside the simulation — the seed diagnostics today, an
//! ftrace-format writer later. Observers only read: attaching one never changes a run. With
//! none attached a tracepoint costs one test of `Kernel::tracing`.

use std::any::Any;

use crate::kernel::Kernel;
use crate::mmzone::Mt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracepoint {
    /// `mm_page_alloc`: an allocation of `order` served from zone `zone`.
    MmPageAlloc { zone: usize, order: u32, migratetype: Mt },
    /// `mm_page_alloc_zone_locked`: a free block of `block_order` taken off zone `zone`'s free
    /// lists for a request of `order` and `migratetype` (split if larger).
    MmPageAllocZoneLocked { zone: usize, block_order: u32, order: u32, migratetype: Mt },
    /// kswapd of `node` begins a `balance_pgdat` pass for `order` (vmlab's own: the kernel's
    /// nearest is `mm_vmscan_kswapd_wake`).
    KswapdBalanceBegin { node: usize, order: u32 },
    /// That pass ended with the node balanced at `order`.
    KswapdBalanceEnd { node: usize, order: u32 },
}

/// An observer of tracepoints. It sees the kernel as it is when the event fires.
pub trait Tracer: Any {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint);
    fn as_any(&self) -> &dyn Any;
}

impl Kernel {
    /// Fire a tracepoint.
    #[inline]
    pub fn trace(&mut self, ev: Tracepoint) {
        if self.tracing {
            self.emit(ev);
        }
    }

    #[cold]
    fn emit(&mut self, ev: Tracepoint) {
        let mut tracers = std::mem::take(&mut self.tracers);
        for t in &mut tracers {
            t.event(self, &ev);
        }
        self.tracers = tracers;
    }

    pub fn attach_tracer(&mut self, t: Box<dyn Tracer>) {
        self.tracers.push(t);
        self.tracing = true;
    }

    /// The attached observer of type `T`, if any.
    pub fn tracer<T: Tracer>(&self) -> Option<&T> {
        self.tracers.iter().find_map(|t| t.as_any().downcast_ref::<T>())
    }
}
