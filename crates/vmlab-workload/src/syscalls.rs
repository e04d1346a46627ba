//! What a program asks of the machine: the system calls (and the user accesses that may fault)
//! the interpreter makes for one task during one quantum. The simulator implements this trait;
//! the interpreter knows nothing else about it — not its kernel, its scheduler or its clock
//! beyond what these calls return.

use rand::RngCore;

use crate::interp::ProgState;

/// How a task's quantum ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Continue,
    /// Sleep until `until` (None: until explicitly woken). `io`: counts as iowait (D state).
    Block {
        until: Option<u64>,
        io: bool,
    },
    /// Sleeps for good (`sleep forever`): the workload counts it as finished.
    SleepForever,
    Exit,
}

/// A call that may have to sleep before it can start (a lock): `Block` means nothing was done,
/// and the same call is made again when the task wakes.
pub enum Sys<T> {
    Ok(T),
    Block(Outcome),
}

/// A call that works through a range page by page, across quanta: its position is advanced in
/// place.
pub enum Progress {
    /// The whole range is done.
    Done,
    /// The quantum is spent; continue from the position in the next one.
    Preempted,
    /// The task sleeps (I/O, a lock, an allocation that failed); continue from the position.
    Block(Outcome),
}

/// A user access to one page.
pub enum Access {
    Done,
    Block(Outcome),
    /// SIGSEGV: outside every mapping, or not allowed by it.
    Segv,
    /// The allocation failed: back off while the OOM killer works (until this time).
    Oom(u64),
}

/// What an `mmap` maps.
pub enum MapBacking {
    Anon,
    File(String),
    /// A SysV shared memory segment, created on first use.
    Shm(String),
}

pub struct MmapArgs {
    pub name: String,
    pub backing: MapBacking,
    pub offset: u64,
    /// Bytes; `None`: the rest of the file.
    pub len: Option<i64>,
    /// MAP_FIXED over the named region.
    pub fixed: bool,
    pub shared: bool,
    pub write: bool,
    pub locked: bool,
}

impl MmapArgs {
    /// A writable anonymous mapping of `bytes` (MAP_SHARED when `shared`): what tests set up.
    pub fn anon(name: &str, bytes: i64, shared: bool) -> MmapArgs {
        MmapArgs {
            name: name.into(),
            backing: MapBacking::Anon,
            offset: 0,
            len: Some(bytes),
            fixed: false,
            shared,
            write: true,
            locked: false,
        }
    }
}

/// A new mapping: pages [start, end); `write`: a private writable mapping (populated by write
/// faults); `errno` set when MAP_LOCKED could not lock it.
pub struct Mapped {
    pub start: u64,
    pub end: u64,
    pub write: bool,
    pub errno: i64,
}

/// An open file: the simulator's handle and its size in bytes.
#[derive(Clone, Copy, Debug)]
pub struct OpenFile {
    pub id: u32,
    pub size: u64,
}

/// The `write()` calls of one write op: the bytes [off, stop) in calls of `bs` bytes from `off`
/// (`bs` 0: one call). A call smaller than a page makes several calls find the same page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteCalls {
    pub off: u64,
    pub stop: u64,
    pub bs: u64,
}

impl WriteCalls {
    /// How many of the calls copy into page `idx`: each one looks the page up in the page cache.
    pub fn into_page(&self, idx: u64) -> u64 {
        let lo = (idx * PAGE_BYTES).max(self.off);
        let hi = ((idx + 1) * PAGE_BYTES).min(self.stop);
        if self.bs == 0 || hi <= lo {
            return u64::from(hi > lo);
        }
        (hi - 1 - self.off) / self.bs - (lo - self.off) / self.bs + 1
    }
}

const PAGE_BYTES: u64 = 4096;

/// The machine as one task's program sees it. Errors (`Err(String)`) end the run with the
/// message at the operation's position: a name the process does not have, for instance.
pub trait Syscalls {
    // ---- the task and its quantum -------------------------------------------------------
    /// The quantum is spent, or the task must sleep after this piece of work: stop here.
    fn need_resched(&self) -> bool;
    /// The quantum is spent (a sleep owed does not stop a page walk).
    fn quantum_spent(&self) -> bool;
    /// Simulated time reached by the work done so far.
    fn clock(&self) -> u64;
    /// Compute in user mode for up to `ns` of this quantum; returns the time it ran.
    fn compute(&mut self, ns: u64) -> u64;
    /// The task's seeded random stream. A concrete type, not `dyn RngCore`: a random touch
    /// draws once per page, and the draw must inline into the touch loop.
    type Rng: RngCore;
    /// The machine's seeded random stream (one for the whole run, for determinism).
    fn rng(&mut self) -> &mut Self::Rng;
    /// The task still has an address space (it has not exited or been killed).
    fn has_mm(&self) -> bool;
    /// The task's name (`comm`).
    fn comm(&self) -> String;
    /// The cost of entering the kernel for a system call.
    fn syscall_entry(&mut self);

    // ---- processes and threads ----------------------------------------------------------
    /// fork(): the child runs `child` in a copy of the address space. `Block` when copying it
    /// must wait (for memory, or for mmap_sem): the task sleeps, then the fork goes on.
    fn fork(&mut self, child: ProgState) -> Sys<()>;
    /// clone(CLONE_VM) once per state; the thread names get ":i" suffixes.
    fn clone_threads(&mut self, threads: Vec<ProgState>);
    /// wait(): true when there are children to wait for (the task then sleeps until the last
    /// one exits).
    fn wait_children(&mut self) -> bool;
    /// Woken while waiting for children: true while some are still alive.
    fn children_pending(&mut self) -> bool;
    /// The next item of the process's shared work queue `queue` of `n` items.
    fn queue_take(&mut self, queue: &str, n: i64) -> Option<i64>;
    fn nr_cpus(&self) -> i64;
    /// sched_setaffinity to one CPU: true when the task must move off the one it runs on.
    fn sched_setaffinity(&mut self, cpu: u32) -> bool;
    /// Record the simulated time now under `name` in the report's metrics.
    fn mark(&mut self, name: &str);
    /// A machine-wide quantity now, in bytes (`wait_until`); read from counters, no walk.
    fn mem_bytes(&self, q: crate::ast::MemQuantity) -> u64;

    // ---- memory -------------------------------------------------------------------------
    /// A named region of the process: (first page, pages).
    fn region(&self, name: &str) -> Result<(u64, u64), String>;
    fn mmap(&mut self, a: &MmapArgs) -> Result<Sys<Mapped>, String>;
    fn munmap(&mut self, start: u64, pages: u64) -> Sys<()>;
    /// mlock one chunk [start, end): `Ok(write)` whether its pages are populated by write
    /// faults, `Err(errno)` when it could not be locked.
    fn mlock_chunk(&mut self, start: u64, end: u64) -> Sys<Result<bool, i64>>;
    fn munlock(&mut self, start: u64, end: u64) -> Sys<()>;
    /// MADV_DONTNEED; returns the errno (0, or EINVAL for locked mappings).
    fn madvise_dontneed(&mut self, start: u64, end: u64) -> i64;
    /// A load or store to one page (which may fault).
    fn access(&mut self, vpn: u64, write: bool) -> Access;
    /// An access to `vpn` is coming soon: a hint, with no effect on what the access does.
    fn prefetch(&mut self, _vpn: u64) {}
    /// Accesses to pages `vpn`, `vpn + stride`, … (`n` of them, in that order), each exactly as
    /// `access` would make it, for as long as each is `Done` without entering the kernel (its
    /// PTE is present and allows it) and the quantum is not spent: returns how many were made.
    /// The first page it stops at is left to `access`. A sequential sweep over a mapped region
    /// is then one call per run instead of one per page.
    fn access_present_run(&mut self, _vpn: u64, _n: u64, _stride: u64, _write: bool) -> u64 {
        0
    }
    /// `access_present_run` for pages `base + pages[0]`, `base + pages[1]`, … in that order.
    fn access_present_pages(&mut self, _base: u64, _pages: &[u64], _write: bool) -> usize {
        0
    }
    /// Fault in pages [*vpn, end) (MAP_POPULATE, mlock): pages already mapped in a locked
    /// mapping become mlocked.
    fn populate(&mut self, vpn: &mut u64, end: u64, write: bool) -> Progress;

    // ---- files --------------------------------------------------------------------------
    /// Path lookup.
    fn open(&mut self, name: &str) -> Result<OpenFile, String>;
    /// Grow a file to at least `size` bytes; returns its size.
    fn extend(&mut self, file: u32, size: u64) -> u64;
    /// read() of pages [*idx, end) in calls of `bs` pages counted from `base` (0: one call).
    fn read(&mut self, file: u32, idx: &mut u64, end: u64, base: u64, bs: u64) -> Progress;
    /// write() of pages [*idx, end), in the calls `calls` describes.
    fn write(&mut self, file: u32, idx: &mut u64, end: u64, calls: WriteCalls) -> Progress;
    /// creat(): replaces a file of that name; on `disk` (by name) or the first one.
    fn create(&mut self, name: &str, size: u64, disk: Option<&str>) -> Result<(), String>;
    /// unlink(): the errno (ENOENT when there is no such file).
    fn unlink(&mut self, name: &str) -> i64;
    /// fsync(): starts writeback of the dirty pages; returns when the last write completes.
    fn fsync(&mut self, name: &str) -> Result<u64, String>;

    // ---- network ------------------------------------------------------------------------
    /// write() to the task's TCP socket: queue `*left` bytes (advanced in place) for a client
    /// that acknowledges `rate` bytes a second, at most `sndbuf` bytes queued at a time.
    fn send(&mut self, left: &mut u64, rate: u64, sndbuf: u64) -> Progress;
    /// echo N > /proc/sys/vm/drop_caches
    fn drop_caches(&mut self);
    /// `swapoff -a`, across quanta: `*pos` is 0 before the call begins it, then where its walk
    /// over the swap area stands. `Err(errno)` when it cannot begin or fails.
    fn swapoff(&mut self, pos: &mut u64) -> Result<Progress, i64>;
}

#[cfg(test)]
mod tests {
    use super::WriteCalls;

    #[test]
    fn a_call_smaller_than_a_page_finds_the_page_once_per_call() {
        // dd bs=64 over a file: every page is copied into by 64 calls.
        let dd = WriteCalls { off: 0, stop: 427_683_520, bs: 64 };
        assert_eq!(dd.into_page(0), 64);
        assert_eq!(dd.into_page(1000), 64);
        // The file's last page holds 427,683,520 - 104,414 * 4096 = 3,776 bytes: 59 calls.
        assert_eq!(dd.into_page(104_414), 59);
        // Calls of a page or more copy into each page once, unless a call ends inside it.
        assert_eq!(WriteCalls { off: 0, stop: 1 << 30, bs: 1 << 20 }.into_page(300), 1);
        assert_eq!(WriteCalls { off: 0, stop: 1 << 20, bs: 0 }.into_page(7), 1);
        let odd = WriteCalls { off: 0, stop: 20_000, bs: 6_000 };
        assert_eq!([odd.into_page(0), odd.into_page(1), odd.into_page(2), odd.into_page(4)], [1, 2, 2, 2]);
        // An unaligned start: the first page holds only the op's bytes.
        let tail = WriteCalls { off: 4000, stop: 8192, bs: 64 };
        assert_eq!([tail.into_page(0), tail.into_page(1)], [2, 65]);
        assert_eq!(tail.into_page(2), 0);
    }
}
