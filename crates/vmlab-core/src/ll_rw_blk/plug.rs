//! 2.4's plug on an empty queue until `tq_disk` runs, and the count of the tasks that slept
//! for a request.

/// 2.4's plug (`generic_plug_device`, `__generic_unplug_device`): a buffer that finds its queue
/// empty plugs it, and the driver's `request_fn` is not called until `tq_disk` runs — there is
/// no timer: a task waiting on a page or buffer (`sync_page` → `run_task_queue(&tq_disk)`), a
/// task sleeping in `__get_request_wait`, kswapd after `kswapd_balance`. While plugged the
/// queue's head is not active, so a buffer may merge into any request on it
/// (`q->head_active && !q->plugged` in `__make_request`). A write request made on a plugged
/// queue is held ([`Held`]) and goes to the device when the queue is unplugged; the plug
/// counts how long each plug lasted and the most it held.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plug {
    /// When the queue was plugged; None: unplugged.
    since: Option<u64>,
    /// Plugs, buffers merged only because the queue was plugged, and the time spent plugged
    /// (total and longest), ns.
    pub plugs: u64,
    pub merges: u64,
    pub plugged_ns: u64,
    pub longest_ns: u64,
    /// The most bytes one plug held at once.
    pub most_held_bytes: u64,
    /// Under the elevator: reads put in a plugged queue (with a driver depth: in the queue's
    /// list, plugged or not), those put ahead of a held or listed request, and the held or
    /// listed requests new ones (reads or writes) were put ahead of.
    pub reads_held: u64,
    pub reads_ahead: u64,
    pub passed: u64,
}

impl Plug {
    /// `generic_plug_device` on an empty queue at `now` (a plugged one stays as it is).
    pub fn plug(&mut self, now: u64) {
        if self.since.is_none() {
            self.since = Some(now);
            self.plugs += 1;
        }
    }

    /// `__generic_unplug_device` at `now`.
    pub fn unplug(&mut self, now: u64) {
        if let Some(at) = self.since.take() {
            let ns = now.saturating_sub(at);
            self.plugged_ns += ns;
            self.longest_ns = self.longest_ns.max(ns);
        }
    }

    pub fn plugged(&self) -> bool {
        self.since.is_some()
    }

    /// The elevator put a new request (`write` or not) ahead of `passed` held ones.
    pub fn note_sorted(&mut self, write: bool, passed: u64) {
        self.reads_held += !write as u64;
        self.reads_ahead += (!write && passed > 0) as u64;
        self.passed += passed;
    }

    /// The plugged queue now holds `bytes`.
    pub fn note_held(&mut self, bytes: u64) {
        self.most_held_bytes = self.most_held_bytes.max(bytes);
    }
}

/// A write request waiting in a plugged queue: its extent, physical segments, when it was
/// made (`since`, for the stat file's ticks) and the pages that complete with it.
#[derive(Debug, Clone)]
pub struct Held {
    pub offset: u64,
    pub bytes: u64,
    pub segs: u32,
    pub since: u64,
    pub pages: Vec<crate::mm_types::Pfn>,
    /// A write, or a read put in the plugged queue by the elevator just before its reader's
    /// wait unplugs it.
    pub write: bool,
    /// Its `elevator_sequence`: how many more times the elevator may put a request ahead of it.
    pub seq: i32,
}

/// Tasks that found no request and slept in `__get_request_wait`, per direction (`[READ,
/// WRITE]`): how many and for how long, ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestWaits {
    pub waits: [u64; 2],
    pub wait_ns: [u64; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_plug_counts_its_length_once_and_replugging_a_plugged_queue_changes_nothing() {
        let mut p = Plug::default();
        p.plug(10 * MS);
        p.plug(12 * MS);
        assert!(p.plugged());
        p.unplug(15 * MS);
        p.unplug(20 * MS);
        assert!(!p.plugged());
        assert_eq!((p.plugs, p.plugged_ns, p.longest_ns), (1, 5 * MS, 5 * MS));
    }
}
