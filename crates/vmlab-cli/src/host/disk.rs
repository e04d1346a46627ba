//! The host's disk as `vmlab run --host` models it: measured once with O_DIRECT reads and writes
//! of a scratch file on the file system `vmlab real` works in, cached, and turned into the
//! [`DiskParams`] the scenario's disks take under `--host`.
//!
//! The model (disk.rs) serves a request of `b` bytes on one of `spindles` independent queues in
//! `latency + b / bandwidth`, splits a request at `chunk_bytes` across spindles, and lets all
//! spindles together move no more than `device_bandwidth`. So three figures at queue depth 1 and
//! two at depth fix it: a 4 KiB random read (`latency + 4 KiB / bw`), a read of one whole chunk
//! (`latency + chunk / bw`), how many 4 KiB reads complete per second with [`DEPTH`] in flight
//! (`spindles / (latency + 4 KiB / bw)`: small requests are bound by their latency, which the
//! streams overlap), and the most bytes per second reads of [`DEVICE_PROBE`] sizes move with
//! several in flight (`device_bandwidth`: large requests are bound by the transfer they share;
//! the device's ceiling is the best any mix reaches, so the figure is the maximum). Since `/4` a
//! read-around window is timed too ([`Window`]): a mmap fault reads `read_ahead_kb` around it
//! in requests that are all in flight at once, and when the device moves such a window slower
//! than the other figures predict, the shared link is lowered until the model's window takes
//! the measured time (on this development host, 2026-11-28, zipf-file's read-around moved
//! 0.85–0.91 GB/s and the best sequential mix 1.69 GB/s). Since `/5` the writes at depth are
//! timed too ([`WriteDepth`]): the file's first pass is written as the flusher writes a new
//! file, [`WRITE_DEPTH`] chunk-sized writes in flight into blocks the file system has allocated
//! but the device has never held, and what they move is the link's write ceiling
//! (`device_write_bandwidth`); a `/4` file has none, and the writes share the read ceiling as
//! before (on issue 17's loop image, 2026-11-29, such writes moved 1.4–1.6 GB/s where reads at
//! the same depth moved 1.0–1.75 and overwrites 1.9–3.5: docs/REAL.md). The chunk is the
//! queue's `max_sectors_kb`: the block layer splits a bio there, so it is the largest request
//! the device sees. Page-cache misses bypass nothing here: like the real run's files, the
//! scratch file was just written, so a hypervisor's cache below a virtual disk serves both alike.

use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use vmlab_core::disk::DiskParams;

/// Names the cache directory (default `$XDG_CACHE_HOME/vmlab`, else `$HOME/.cache/vmlab`).
pub const CACHE_ENV: &str = "VMLAB_CACHE_DIR";
/// 4 KiB reads in flight for the parallelism figure: the `ssd` and `nvme` models' whole-device
/// depth is 32–1024; a virtual disk's single queue takes `nr_requests` (256 here), more than
/// two CPUs can keep busy.
pub const DEPTH: u32 = 32;
/// Request sizes and readers at once for the device-wide figure. On this development host's
/// virtio disk (2026-11-27) 4 MiB reads moved 0.8–0.9 GB/s at every depth, 160 KiB–1 MiB reads
/// 1.0–1.1 GB/s from depth 2 up: the ceiling is not found with the largest requests alone.
pub const DEVICE_PROBE: (&[u64], &[u32]) = (&[256 << 10, 1 << 20], &[2, 4, 8]);
const SCRATCH_BYTES: u64 = 256 << 20;
const SMALL: u64 = 4096;
const SMALL_READS: u32 = 2000;
/// `/2` added the chunk reads at depth, `/3` times the writes as overwrites without a
/// `fdatasync`, `/4` adds the read-around window, `/5` the writes at depth. A `/3` or `/4` file
/// is still read as it stands (its model is the one it gave before: no write ceiling, the
/// summary says so); an older one is measured again.
const SCHEMA: &str = "vmlab.host-disk/5";
const SCHEMA_4: &str = "vmlab.host-disk/4";
const SCHEMA_3: &str = "vmlab.host-disk/3";
/// Writes in flight for the write ceiling: the host's flusher kept a median of 15–16 (a
/// time-weighted mean of 17–19) `W` requests in flight on issue 17's loop device while
/// dirty-writer ran (`block_rq_issue`/`block_rq_complete`, 2026-11-29), its requests
/// `max_sectors_kb` (1,280 KiB) and 512 KiB.
pub const WRITE_DEPTH: u32 = 16;
/// The read-around window's requests: zipf-file's read-around requests on the development host
/// were 436–446 KiB on average (`/sys/block/vda/stat`, 2026-11-28), readahead's bios ending at
/// cached pages and at `max_segments`.
const WINDOW_REQ: u64 = 512 << 10;
/// Windows timed: each of the scratch file's windows once, twice over in another order.
const WINDOW_PASSES: u64 = 2;

/// What was measured, in the units it was measured in.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Where, and on what: the scratch file's directory, its device (`major:minor`), `uname -r`.
    pub dir: String,
    pub device: String,
    pub kernel: String,
    /// The device queue's `max_sectors_kb` × 1024 (1 MiB when unknown).
    pub chunk_bytes: u64,
    /// Mean of one 4 KiB O_DIRECT read at a random offset, alone.
    pub read_4k_ns: u64,
    /// Mean of one `chunk_bytes` O_DIRECT read, sequential, alone.
    pub read_chunk_ns: u64,
    /// Mean of one `chunk_bytes` O_DIRECT overwrite of the file's written blocks, alone, with
    /// no `fdatasync` (as a swap-out or the flusher's write waits for none).
    pub write_chunk_ns: u64,
    /// 4 KiB random reads completed per second with `depth` in flight.
    pub iops_at_depth: u64,
    pub depth: u32,
    /// The most bytes per second O_DIRECT reads moved with several in flight, each reader
    /// sequential in its own part of the file ([`DEVICE_PROBE`]'s sizes and depths).
    pub device_bps: u64,
    /// A read-around window's time (`/4`; `None` in a `/3` file).
    pub window: Option<Window>,
    /// The writes at depth (`/5`; `None` in an older file).
    pub write_depth: Option<WriteDepth>,
}

/// What the device takes from writes as the flusher issues them: `depth` writers at once, each
/// writing its own part of a new file in `req_bytes` O_DIRECT writes, into blocks the file
/// system has allocated (fallocate) and the device never held, as a flusher's delayed
/// allocation gets them; `bps` is the bytes over the time from the first write's start to the
/// last one's end (no `fdatasync`: the flusher waits for none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriteDepth {
    pub req_bytes: u64,
    pub depth: u32,
    pub bps: u64,
}
/// A mmap fault's read-around as the device sees it (6.8 `mm/filemap.c`
/// `do_sync_mmap_readahead`: `ra_pages` around the fault, submitted together under
/// `read_pages`' plug): `bytes` at a window-aligned offset as `req_bytes` O_DIRECT reads all in
/// flight at once, one window after another; `ns` is the mean from the first read's start to the
/// last one's end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub bytes: u64,
    pub req_bytes: u64,
    pub ns: u64,
}

impl Window {
    /// The model's time for this window on a disk of `p`, alone: every request submitted at once,
    /// the window placed at a chunk boundary as the measurement's windows are (see [`measure`]).
    pub fn model_ns(&self, p: DiskParams) -> u64 {
        let Ok(mut d) = vmlab_core::disk::Disk::new(p) else { return u64::MAX };
        let t0 = 1_000_000_000;
        let n = self.bytes.div_ceil(self.req_bytes.max(1));
        let done = (0..n).map(|k| d.submit(t0, k * self.req_bytes, self.req_bytes, false)).max().unwrap_or(t0);
        done - t0
    }

    /// `p` with its link lowered until the model's window takes the measured time; `p` itself
    /// when the model is already as slow (the window then says nothing the other figures did
    /// not: its time is the streams', not the link's).
    pub fn fit_link(&self, p: DiskParams) -> DiskParams {
        let with = |bps: u64| DiskParams { device_bandwidth_bps: bps, ..p };
        let top = if p.device_bandwidth_bps > 0 { p.device_bandwidth_bps } else { u64::MAX / 4 };
        if self.model_ns(with(top)) >= self.ns {
            return p;
        }
        // The model's time falls as the link widens: the widest link still as slow as measured.
        let (mut lo, mut hi) = (1_000_000u64, top);
        while hi - lo > 1_000 {
            let mid = lo + (hi - lo) / 2;
            if self.model_ns(with(mid)) >= self.ns {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        with(lo)
    }
}

impl Measured {
    /// The model's parameters (see the module comment for the algebra).
    pub fn params(&self) -> DiskParams {
        let c = self.chunk_bytes.max(2 * SMALL);
        // chunk / bw − 4 KiB / bw = read_chunk − read_4k; noise can make that ≤ 0 on a disk
        // whose transfer time is lost in its latency: then all of read_chunk is transfer.
        let dt = self.read_chunk_ns.saturating_sub(self.read_4k_ns);
        let bw = if dt > 0 {
            ((c - SMALL) as u128 * 1_000_000_000 / dt as u128) as u64
        } else {
            (c as u128 * 1_000_000_000 / self.read_chunk_ns.max(1) as u128) as u64
        }
        .max(1);
        let xfer_4k = (SMALL as u128 * 1_000_000_000 / bw as u128) as u64;
        let latency_ns = self.read_4k_ns.saturating_sub(xfer_4k).max(1_000);
        let per_read = (latency_ns + xfer_4k) as f64 / 1e9;
        let spindles = ((self.iops_at_depth as f64 * per_read).round() as u32).clamp(1, self.depth.max(1));
        // A chunk written alone is `latency + chunk / write_bw`; no small write is measured, so
        // the read's latency is taken for both and the rest of the write is its transfer. A
        // write no slower than the latency alone says nothing: it then goes at the read
        // bandwidth.
        let write_bandwidth_bps = match self.write_chunk_ns.checked_sub(latency_ns).filter(|&t| t > 0) {
            Some(t) => ((c as u128 * 1_000_000_000 / t as u128) as u64).max(1),
            None => bw,
        };
        let p = DiskParams {
            bandwidth_bps: bw,
            seek_ns: 0,
            latency_ns,
            queue_depth: self.depth.max(1),
            spindles,
            mirrored: false,
            chunk_bytes: c,
            device_bandwidth_bps: self.device_bps,
            write_bandwidth_bps,
            // The writes at depth are the link's write ceiling; the read-around window below
            // lowers the read one only.
            device_write_bandwidth_bps: self.write_depth.map_or(0, |w| w.bps),
            // Not measurable here: on issue 17's loop image an O_DIRECT chunk from one buffer took
            // 0.28 ms alone, a chunk of page cache written back alone 1.15 ms, and the flusher's
            // requests under the workload 2.2–2.8 ms beyond their drain (docs/REAL.md, "The loop's
            // write completions at depth"); a record states the traced figure in its disk sets.
            write_completion_latency_ns: 0,
        };
        match self.window {
            Some(w) => w.fit_link(p),
            None => p,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let schema = match (self.window, self.write_depth) {
            (Some(_), Some(_)) => SCHEMA,
            (Some(_), None) => SCHEMA_4,
            _ => SCHEMA_3,
        };
        let mut v = serde_json::json!({
            "schema": schema,
            "dir": self.dir,
            "device": self.device,
            "kernel": self.kernel,
            "chunk_bytes": self.chunk_bytes,
            "read_4k_ns": self.read_4k_ns,
            "read_chunk_ns": self.read_chunk_ns,
            "write_chunk_ns": self.write_chunk_ns,
            "iops_at_depth": self.iops_at_depth,
            "depth": self.depth,
            "device_bps": self.device_bps,
        });
        if let Some(w) = self.window {
            v["window_bytes"] = w.bytes.into();
            v["window_req_bytes"] = w.req_bytes.into();
            v["read_window_ns"] = w.ns.into();
        }
        if let (Some(_), Some(w)) = (self.window, self.write_depth) {
            v["write_depth"] = w.depth.into();
            v["write_depth_req_bytes"] = w.req_bytes.into();
            v["write_depth_bps"] = w.bps.into();
        }
        v
    }

    pub fn from_json(text: &str) -> Result<Measured, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let schema = v.get("schema").and_then(|s| s.as_str());
        if schema != Some(SCHEMA) && schema != Some(SCHEMA_4) && schema != Some(SCHEMA_3) {
            return Err(format!("not a {SCHEMA} (or {SCHEMA_4}, {SCHEMA_3}) document"));
        }
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string).ok_or(format!("no string `{k}`"));
        let n = |k: &str| v.get(k).and_then(|x| x.as_u64()).ok_or(format!("no whole number `{k}`"));
        let m = Measured {
            dir: s("dir")?,
            device: s("device")?,
            kernel: s("kernel")?,
            chunk_bytes: n("chunk_bytes")?,
            read_4k_ns: n("read_4k_ns")?,
            read_chunk_ns: n("read_chunk_ns")?,
            write_chunk_ns: n("write_chunk_ns")?,
            iops_at_depth: n("iops_at_depth")?,
            depth: u32::try_from(n("depth")?).map_err(|_| "`depth` out of range".to_string())?,
            device_bps: n("device_bps")?,
            window: if schema != Some(SCHEMA_3) {
                Some(Window { bytes: n("window_bytes")?, req_bytes: n("window_req_bytes")?, ns: n("read_window_ns")? })
            } else {
                None
            },
            write_depth: if schema == Some(SCHEMA) {
                Some(WriteDepth {
                    req_bytes: n("write_depth_req_bytes")?,
                    depth: u32::try_from(n("write_depth")?).map_err(|_| "`write_depth` out of range".to_string())?,
                    bps: n("write_depth_bps")?,
                })
            } else {
                None
            },
        };
        if m.write_depth.is_some_and(|w| w.req_bytes == 0 || w.depth == 0 || w.bps == 0) {
            return Err("a zero write at depth".into());
        }
        if m.window.is_some_and(|w| w.bytes == 0 || w.req_bytes == 0 || w.ns == 0) {
            return Err("a zero read-around window".into());
        }
        if m.read_4k_ns == 0 || m.read_chunk_ns == 0 || m.chunk_bytes < SMALL || m.depth == 0 || m.device_bps == 0 {
            return Err("a zero time, depth or chunk".into());
        }
        Ok(m)
    }

    /// One line for `params.host_disk`.
    pub fn summary(&self) -> String {
        let p = self.params();
        let window = self.window.map_or(String::new(), |w| {
            format!(
                ", read-around {} KiB as {} KiB reads at once {} us (model {} us)",
                w.bytes / 1024,
                w.req_bytes / 1024,
                w.ns / 1000,
                w.model_ns(p) / 1000
            )
        });
        let writes = match self.write_depth {
            Some(w) => format!(", {} KiB writes {} at once into new blocks {} B/s", w.req_bytes / 1024, w.depth, w.bps),
            None => ", no writes at depth (an older measurement: writes share the read ceiling)".to_string(),
        };
        format!(
            "{} on {} ({}): 4KiB read {} us, {} KiB read {} us, write {} us, {} IOPS at depth {}, \
             {} B/s at most at depth{window}{writes} => bandwidth={}B/s write_bandwidth={}B/s latency={}ns \
             spindles={} chunk={} device_bandwidth={}B/s device_write_bandwidth={}B/s",
            self.dir,
            self.device,
            self.kernel,
            self.read_4k_ns / 1000,
            self.chunk_bytes / 1024,
            self.read_chunk_ns / 1000,
            self.write_chunk_ns / 1000,
            self.iops_at_depth,
            self.depth,
            self.device_bps,
            p.bandwidth_bps,
            p.write_bandwidth_bps,
            p.latency_ns,
            p.spindles,
            p.chunk_bytes,
            p.device_bandwidth_bps,
            p.device_write_bandwidth_bps
        )
    }
}

/// `$VMLAB_CACHE_DIR`, else `$XDG_CACHE_HOME/vmlab`, else `~/.cache/vmlab`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(CACHE_ENV) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("vmlab"))
}

/// The cache file of one device (`major:minor`): a measurement is of a device, so `--disk-dir`
/// on another file system measures (and caches) that one.
pub fn cache_path(device: &str) -> Option<PathBuf> {
    Some(cache_dir()?.join(format!("host-disk-{}.json", device.replace(':', "-"))))
}

/// The cached measurement of `dir`'s device, or a new one (written to the cache) when there is
/// none or `remeasure` asks.
pub fn get(dir: &Path, remeasure: bool) -> Result<Measured, String> {
    let device = device_of(dir)?;
    let cache = cache_path(&device).ok_or("no cache directory: set VMLAB_CACHE_DIR or HOME")?;
    if !remeasure {
        if let Ok(text) = std::fs::read_to_string(&cache) {
            // An older schema lacks figures the model now takes: measured again, below. A `/3`
            // or `/4` file lacks only the window or the writes at depth, and gives the model it
            // gave before.
            let older = text.contains("\"vmlab.host-disk/")
                && ![SCHEMA, SCHEMA_4, SCHEMA_3].iter().any(|s| text.contains(&format!("\"{s}\"")));
            if !older {
                return Measured::from_json(&text)
                    .map_err(|e| format!("{}: {e} (--remeasure rewrites it)", cache.display()));
            }
        }
    }
    let m = measure(dir)?;
    if let Some(p) = cache.parent() {
        std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let text = serde_json::to_string_pretty(&m.to_json()).unwrap_or_default() + "\n";
    std::fs::write(&cache, text).map_err(|e| format!("{}: {e}", cache.display()))?;
    Ok(m)
}

fn device_of(dir: &Path) -> Result<String, String> {
    let md = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dev = md.dev();
    Ok(format!("{}:{}", libc::major(dev), libc::minor(dev)))
}

/// A `queue/NAME` attribute in KiB of the device holding `dir` (or of its whole disk, for a
/// partition), in bytes: `max_sectors_kb` (the request size) or `read_ahead_kb` (a mmap fault's
/// read-around).
fn queue_kb_bytes(device: &str, name: &str) -> Option<u64> {
    let base = PathBuf::from(format!("/sys/dev/block/{device}"));
    [base.join("queue").join(name), base.join("../queue").join(name)]
        .into_iter()
        .find_map(|q| std::fs::read_to_string(q).ok().and_then(|t| t.trim().parse::<u64>().ok()))
        .map(|kb| kb * 1024)
}

/// A buffer O_DIRECT accepts: aligned to 4 KiB.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(bytes: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(bytes, 4096).expect("a valid layout");
        // SAFETY: the layout's size is non-zero (callers pass ≥ 4 KiB).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, layout }
    }
    /// A buffer of non-zero bytes, so that no layer below can skip the write as zeroes.
    fn filled(bytes: usize) -> Aligned {
        let mut a = Aligned::new(bytes);
        a.buf().iter_mut().enumerate().for_each(|(i, b)| *b = (i * 7 + 1) as u8);
        a
    }
    fn buf(&mut self) -> &mut [u8] {
        // SAFETY: ptr owns layout.size() initialised (zeroed) bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The measurement: a 256 MiB scratch file in `dir`, preallocated, written twice (the first
/// pass by [`WRITE_DEPTH`] writers at once, the second alone, both timed) and read once in chunks, then 2,000 4 KiB reads alone and as many with [`DEPTH`] threads reading at once, then
/// the file once over by each of [`DEVICE_PROBE`]'s mixes; about two seconds on a fast disk. The file is removed.
pub fn measure(dir: &Path) -> Result<Measured, String> {
    let device = device_of(dir)?;
    let chunk = queue_kb_bytes(&device, "max_sectors_kb").unwrap_or(1 << 20).clamp(2 * SMALL, 64 << 20);
    let path = dir.join(format!("vmlab-disk-probe-{}", std::process::id()));
    // The read-around's requests end at the chunk too. A device without readahead (or none
    // found) is timed with the 128 KiB default's window; a window is two requests at least and
    // 16 MiB (32 readers) at most, so the scratch file stays near its 256 MiB.
    let req = WINDOW_REQ.min(chunk);
    let window = queue_kb_bytes(&device, "read_ahead_kb")
        .filter(|&b| b > 0)
        .unwrap_or(128 << 10)
        .next_multiple_of(req)
        .clamp(2 * req, (16 << 20).max(2 * req));
    let r = measure_file(&path, chunk, window, req);
    let _ = std::fs::remove_file(&path);
    let r = r.map_err(|e| format!("{}: {e}", path.display()))?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    Ok(Measured {
        dir: dir.display().to_string(),
        device,
        kernel,
        chunk_bytes: chunk,
        read_4k_ns: r.read_4k_ns,
        read_chunk_ns: r.read_chunk_ns,
        write_chunk_ns: r.write_chunk_ns,
        iops_at_depth: r.iops_at_depth,
        depth: DEPTH,
        device_bps: r.device_bps,
        window: Some(Window { bytes: window, req_bytes: req, ns: r.window_ns }),
        write_depth: Some(WriteDepth { req_bytes: chunk, depth: WRITE_DEPTH, bps: r.write_depth_bps }),
    })
}

/// What [`measure_file`] times, as [`Measured`] names them.
struct Figures {
    read_4k_ns: u64,
    read_chunk_ns: u64,
    write_chunk_ns: u64,
    iops_at_depth: u64,
    device_bps: u64,
    window_ns: u64,
    write_depth_bps: u64,
}

fn measure_file(path: &Path, chunk: u64, window: u64, req: u64) -> std::io::Result<Figures> {
    let f =
        std::fs::OpenOptions::new().read(true).write(true).create_new(true).custom_flags(libc::O_DIRECT).open(path)?;
    // Room for four windows at least.
    let chunks = (SCRATCH_BYTES / chunk).max(4).max((4 * window).div_ceil(chunk));
    let size = chunks * chunk;
    // SAFETY: a valid open descriptor; fallocate only sizes the file.
    if unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, 0, size as libc::off_t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut big = Aligned::filled(chunk as usize);
    // The first pass is the flusher's: WRITE_DEPTH writers into the allocated, never written
    // blocks. On issue 17's loop image (2026-11-29) these moved 1.4–1.6 GB/s where the same
    // writes as overwrites moved 2.0–2.7: the image file's holes are allocated on the host's
    // file system as they are first written.
    let write_depth_bps = write_at_depth(&f, size, chunk, WRITE_DEPTH)?;
    f.sync_data()?;
    // Timed on the second pass: the first also converts the preallocated (unwritten) extents
    // and waits for a `fdatasync`, which a swap-out — written to the swap file's blocks
    // directly — never does. On the development host (2026-11-28) the first pass gave 517 MB/s
    // a stream, overwrites of 512 KiB at depth 1 1.38 GB/s (scripts/probe-read-under-writes.py).
    let t = Instant::now();
    for i in 0..chunks {
        f.write_all_at(big.buf(), i * chunk)?;
    }
    let write_chunk_ns = t.elapsed().as_nanos() as u64 / chunks;
    let t = Instant::now();
    for i in 0..chunks {
        f.read_exact_at(big.buf(), i * chunk)?;
    }
    let read_chunk_ns = t.elapsed().as_nanos() as u64 / chunks;
    let blocks = size / SMALL;
    let mut small = Aligned::new(SMALL as usize);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
    let t = Instant::now();
    for _ in 0..SMALL_READS {
        f.read_exact_at(small.buf(), rng.gen_range(0..blocks) * SMALL)?;
    }
    let read_4k_ns = t.elapsed().as_nanos() as u64 / SMALL_READS as u64;
    let per = SMALL_READS.div_ceil(DEPTH);
    let took = in_parallel(DEPTH as u64, |k| {
        let mut buf = Aligned::new(SMALL as usize);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1000 + k);
        for _ in 0..per {
            f.read_exact_at(buf.buf(), rng.gen_range(0..blocks) * SMALL)?;
        }
        Ok(())
    })?;
    let iops = (per as u128 * DEPTH as u128 * 1_000_000_000 / took.max(1)) as u64;
    let mut device_bps = 0;
    for &req in DEVICE_PROBE.0 {
        for &depth in DEVICE_PROBE.1 {
            // The block layer splits anything larger at the chunk.
            device_bps = device_bps.max(read_at_depth(&f, size, req.min(chunk), depth)?);
        }
    }
    let window_ns = read_windows(&f, size, window, req)?;
    Ok(Figures {
        read_4k_ns,
        read_chunk_ns,
        write_chunk_ns,
        iops_at_depth: iops,
        device_bps: device_bps.max(1),
        window_ns,
        write_depth_bps,
    })
}

/// Bytes per second of `depth` writers, each writing its own `1/depth` of the file's `size`
/// bytes sequentially in `req`-byte O_DIRECT writes (the whole file: a part's remainder goes to
/// the last writer).
fn write_at_depth(f: &std::fs::File, size: u64, req: u64, depth: u32) -> std::io::Result<u64> {
    let reqs = size / req;
    let part = (reqs / depth as u64).max(1);
    let took = in_parallel(depth as u64, |k| {
        let mut buf = Aligned::filled(req as usize);
        let end = if k + 1 == depth as u64 { reqs } else { ((k + 1) * part).min(reqs) };
        for i in (k * part).min(end)..end {
            f.write_all_at(buf.buf(), i * req)?;
        }
        Ok(())
    })?;
    Ok((((reqs * req) as u128 * 1_000_000_000 / took.max(1)) as u64).max(1))
}

/// Mean nanoseconds of one read-around window: `window / req` readers, each reading its `req`
/// bytes of the same window at once; the windows are the file's window-aligned ones, each once
/// per pass, in a shuffled order. Readers are started once and meet at a barrier before and
/// after each window, so that no thread start is timed.
fn read_windows(f: &std::fs::File, size: u64, window: u64, req: u64) -> std::io::Result<u64> {
    let readers = window / req;
    let windows = size / window;
    let mut order: Vec<u64> = Vec::new();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(29);
    for _ in 0..WINDOW_PASSES {
        let mut pass: Vec<u64> = (0..windows).collect();
        for i in (1..pass.len()).rev() {
            pass.swap(i, rng.gen_range(0..=i));
        }
        order.extend(pass);
    }
    let barrier = std::sync::Barrier::new(readers as usize);
    let took = std::sync::Mutex::new(0u128);
    std::thread::scope(|s| -> std::io::Result<()> {
        let hs: Vec<_> = (0..readers)
            .map(|k| {
                let (order, barrier, took) = (&order, &barrier, &took);
                s.spawn(move || -> std::io::Result<()> {
                    let mut buf = Aligned::new(req as usize);
                    let mut failed = None;
                    for &w in order {
                        barrier.wait();
                        let t = Instant::now();
                        // A failed reader still meets the others at every barrier.
                        if failed.is_none() {
                            failed = f.read_exact_at(buf.buf(), w * window + k * req).err();
                        }
                        // The window ends when its last reader is done.
                        if barrier.wait().is_leader() {
                            *took.lock().unwrap_or_else(|e| e.into_inner()) += t.elapsed().as_nanos();
                        }
                    }
                    failed.map_or(Ok(()), Err)
                })
            })
            .collect();
        for h in hs {
            h.join().map_err(|_| std::io::Error::other("a reader thread panicked"))??;
        }
        Ok(())
    })?;
    let took = took.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(((took / order.len().max(1) as u128) as u64).max(1))
}

/// Bytes per second of `depth` readers, each reading its own `1/depth` of the file's `size`
/// bytes sequentially in `req`-byte O_DIRECT reads.
fn read_at_depth(f: &std::fs::File, size: u64, req: u64, depth: u32) -> std::io::Result<u64> {
    let part = (size / req / depth as u64).max(1);
    let took = in_parallel(depth as u64, |k| {
        let mut buf = Aligned::new(req as usize);
        for i in 0..part {
            f.read_exact_at(buf.buf(), (k * part + i) * req)?;
        }
        Ok(())
    })?;
    let moved = part as u128 * depth as u128 * req as u128;
    Ok((moved * 1_000_000_000 / took.max(1)) as u64)
}

/// Runs `job(0)` … `job(n - 1)` on `n` threads at once; returns the nanoseconds they took
/// together, or the first error.
fn in_parallel(n: u64, job: impl Fn(u64) -> std::io::Result<()> + Sync) -> std::io::Result<u128> {
    let t = Instant::now();
    std::thread::scope(|s| -> std::io::Result<()> {
        let job = &job;
        let hs: Vec<_> = (0..n).map(|k| s.spawn(move || job(k))).collect();
        for h in hs {
            h.join().map_err(|_| std::io::Error::other("a probe thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(t.elapsed().as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Measured {
        Measured {
            dir: "/var/tmp".into(),
            device: "254:0".into(),
            kernel: "6.18.44".into(),
            chunk_bytes: 4 << 20,
            read_4k_ns: 50_000,
            // 4 MiB − 4 KiB more in 4 ms more: 1,047,552,000 B/s.
            read_chunk_ns: 4_050_000,
            write_chunk_ns: 4_500_000,
            iops_at_depth: 160_000,
            depth: 32,
            device_bps: 1_200_000_000,
            window: None,
            write_depth: None,
        }
    }

    fn sample5() -> Measured {
        Measured {
            window: Some(Window { bytes: 8 << 20, req_bytes: 512 << 10, ns: 10_000_000 }),
            write_depth: Some(WriteDepth { req_bytes: 4 << 20, depth: 16, bps: 1_500_000_000 }),
            ..sample()
        }
    }

    #[test]
    fn the_writes_at_depth_are_the_links_write_ceiling() {
        let m = sample5();
        let p = m.params();
        assert_eq!(p.device_write_bandwidth_bps, 1_500_000_000);
        // The slow window lowers the read ceiling only; the rest is the `/4` model.
        let four = Measured { write_depth: None, ..m.clone() }.params();
        assert_eq!(four.device_write_bandwidth_bps, 0, "no write probe, no write ceiling");
        assert!(p.device_bandwidth_bps < 1_200_000_000);
        assert_eq!(DiskParams { device_write_bandwidth_bps: 0, ..p }, four);
        // Writes at depth now move at the measured 1.5 GB/s, above the lowered read ceiling.
        let mut d = vmlab_core::disk::Disk::new(p).unwrap();
        let mut end = 0;
        for k in 0..64u64 {
            end = end.max(d.submit(0, k * (4 << 20), 4 << 20, true));
        }
        let bps = (64u128 * (4 << 20) * 1_000_000_000 / end as u128) as u64;
        assert!((1_400_000_000..=1_500_000_000).contains(&bps), "{bps} B/s");
        assert!(m.summary().contains("4096 KiB writes 16 at once into new blocks 1500000000 B/s"), "{}", m.summary());
        assert!(m.summary().ends_with("device_write_bandwidth=1500000000B/s"), "{}", m.summary());
        let host_sets = crate::host::disk_sets(&["sda".to_string()], &p);
        assert!(host_sets.contains(&"disk.sda.device_write_bandwidth=\"1500000000B/s\"".to_string()), "{host_sets:?}");
        let old_sets = crate::host::disk_sets(&["sda".to_string()], &four);
        assert!(old_sets.contains(&"disk.sda.device_write_bandwidth=\"0B/s\"".to_string()), "{old_sets:?}");
    }

    #[test]
    fn a_version_4_file_is_read_without_writes_at_depth_and_says_so() {
        let m = sample5();
        let text = serde_json::to_string(&m.to_json()).unwrap();
        assert!(text.contains("vmlab.host-disk/5") && text.contains("\"write_depth_bps\":1500000000"), "{text}");
        assert_eq!(Measured::from_json(&text).unwrap(), m);
        let four = Measured { write_depth: None, ..m.clone() };
        let text4 = serde_json::to_string(&four.to_json()).unwrap();
        assert!(text4.contains("vmlab.host-disk/4") && !text4.contains("write_depth"), "{text4}");
        let back = Measured::from_json(&text4).unwrap();
        assert_eq!((back.write_depth, back.params()), (None, four.params()));
        assert!(back.summary().contains("no writes at depth (an older measurement"), "{}", back.summary());
        // A `/5` file needs its writes at depth, and none of them zero.
        let bare = text4.replace("vmlab.host-disk/4", "vmlab.host-disk/5");
        assert!(Measured::from_json(&bare).unwrap_err().contains("write_depth"));
        let zero = text.replace("\"write_depth_bps\":1500000000", "\"write_depth_bps\":0");
        assert!(Measured::from_json(&zero).unwrap_err().contains("write at depth"));
    }

    #[test]
    fn parameters_from_a_measurement() {
        let p = sample().params();
        assert_eq!(p.bandwidth_bps, 1_047_552_000);
        assert_eq!(p.chunk_bytes, 4 << 20);
        // 50 us − 4096 B at that bandwidth (3.91 us)
        assert_eq!(p.latency_ns, 46_090);
        // 160,000/s × 50 us = 8 reads overlap
        assert_eq!(p.spindles, 8);
        assert!(!p.mirrored && p.seek_ns == 0);
        assert_eq!(p.device_bandwidth_bps, 1_200_000_000, "the reads at depth");
        // 4 MiB in 4,500 us − 46,090 ns of latency
        assert_eq!(p.write_bandwidth_bps, 941_712_787);
        p.validate().unwrap();
        // The model gives back what was measured, alone.
        let mut d = vmlab_core::disk::Disk::new(p).unwrap();
        let t = d.submit(0, 1 << 30, 4096, false);
        assert!((t as i64 - 50_000).abs() < 10, "4 KiB read {t} ns");
        let t0 = 1_000_000_000;
        let t = d.submit(t0, 8 << 30, 4 << 20, false) - t0;
        assert!((t as i64 - 4_050_000).abs() < 10, "chunk read {t} ns");
        let t0 = 2_000_000_000;
        let t = d.submit(t0, 16 << 30, 4 << 20, true) - t0;
        assert!((t as i64 - 4_500_000).abs() < 10, "chunk write {t} ns");
    }

    #[test]
    fn noisy_and_degenerate_measurements_still_give_a_valid_disk() {
        let mut m = sample();
        m.read_chunk_ns = 40_000; // faster than the 4 KiB read: noise
        m.iops_at_depth = 1;
        m.write_chunk_ns = 500; // within the latency: no write figure
        let p = m.params();
        assert_eq!(p.write_bandwidth_bps, p.bandwidth_bps);
        assert_eq!(p.spindles, 1);
        assert!(p.latency_ns >= 1_000);
        p.validate().unwrap();
        m.iops_at_depth = u64::MAX / 2;
        assert_eq!(m.params().spindles, 32, "capped at the depth measured");
    }

    #[test]
    fn a_slow_read_around_window_lowers_the_link_until_the_model_takes_its_time() {
        let before = sample().params();
        // 8 MiB as 16 reads of 512 KiB over two 4 MiB chunks on two of the eight streams: at
        // least the link's 1.2 GB/s (6.99 ms), at most that plus every request's latency.
        let fast = Window { bytes: 8 << 20, req_bytes: 512 << 10, ns: 0 };
        let model = fast.model_ns(before);
        assert!((6_990_000..6_990_000 + 16 * 46_090).contains(&model), "{model} ns");
        // Measured at what the model gives, or faster: the window says nothing more.
        for ns in [model, model / 2] {
            let m = Measured { window: Some(Window { ns, ..fast }), ..sample() };
            assert_eq!(m.params(), before, "{ns} ns");
        }
        // Measured at 10 ms (0.84 GB/s): the link comes down so that the model takes 10 ms,
        // and nothing else moves.
        let w = Window { ns: 10_000_000, ..fast };
        let p = Measured { window: Some(w), ..sample() }.params();
        assert!(p.device_bandwidth_bps < before.device_bandwidth_bps);
        assert_eq!(DiskParams { device_bandwidth_bps: before.device_bandwidth_bps, ..p }, before);
        let got = w.model_ns(p);
        assert!(got.abs_diff(10_000_000) < 20_000, "model {got} ns against 10 ms");
        // 8 MiB crossing the link in the 10 ms, less at most the 16 latencies.
        let (lo, hi) = ((8u64 << 20) * 100, (8u64 << 20) * 1_000_000_000 / (10_000_000 - 16 * 46_090));
        assert!((lo..hi).contains(&p.device_bandwidth_bps), "{}", p.device_bandwidth_bps);
        p.validate().unwrap();
    }

    #[test]
    fn a_version_3_file_is_read_without_a_window_and_gives_the_model_it_gave() {
        let m = sample();
        let text = serde_json::to_string(&m.to_json()).unwrap();
        assert!(text.contains("vmlab.host-disk/3") && !text.contains("window"), "{text}");
        let back = Measured::from_json(&text).unwrap();
        assert_eq!(back.window, None);
        assert_eq!(back.params(), m.params());
        // A /4 file needs its window.
        let four = text.replace("vmlab.host-disk/3", "vmlab.host-disk/4");
        assert!(Measured::from_json(&four).unwrap_err().contains("window_bytes"));
        let w = Measured { window: Some(Window { bytes: 8 << 20, req_bytes: 512 << 10, ns: 9_000_000 }), ..m };
        let text = serde_json::to_string(&w.to_json()).unwrap();
        assert!(text.contains("vmlab.host-disk/4"));
        assert_eq!(Measured::from_json(&text).unwrap(), w);
        let zero = text.replace("\"read_window_ns\":9000000", "\"read_window_ns\":0");
        assert!(Measured::from_json(&zero).unwrap_err().contains("window"));
        assert!(
            w.summary().contains("read-around 8192 KiB as 512 KiB reads at once 9000 us (model 9000 us)"),
            "{}",
            w.summary()
        );
    }

    #[test]
    fn the_cache_round_trips_and_bad_files_are_errors() {
        let m = sample();
        let text = serde_json::to_string(&m.to_json()).unwrap();
        assert_eq!(Measured::from_json(&text).unwrap(), m);
        assert!(Measured::from_json("{").unwrap_err().contains("not JSON"));
        assert!(Measured::from_json("{\"schema\":\"x\"}").unwrap_err().contains("vmlab.host-disk/5"));
        let no_depth = text.replace("\"depth\":32", "\"depth\":\"a\"");
        assert!(Measured::from_json(&no_depth).unwrap_err().contains("depth"));
        let zero = text.replace("\"read_4k_ns\":50000", "\"read_4k_ns\":0");
        assert!(Measured::from_json(&zero).is_err());
        let older = text.replace("\"device_bps\":1200000000,", "");
        assert!(Measured::from_json(&older).unwrap_err().contains("device_bps"));
    }
}
