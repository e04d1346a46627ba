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
//! the device's ceiling is the best any mix reaches, so the figure is the maximum). The chunk is the
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
/// `fdatasync`; an older cache file is measured again.
const SCHEMA: &str = "vmlab.host-disk/3";

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
        DiskParams {
            bandwidth_bps: bw,
            seek_ns: 0,
            latency_ns,
            queue_depth: self.depth.max(1),
            spindles,
            mirrored: false,
            chunk_bytes: c,
            device_bandwidth_bps: self.device_bps,
            write_bandwidth_bps,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "schema": SCHEMA,
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
        })
    }

    pub fn from_json(text: &str) -> Result<Measured, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA) {
            return Err(format!("not a {SCHEMA} document"));
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
        };
        if m.read_4k_ns == 0 || m.read_chunk_ns == 0 || m.chunk_bytes < SMALL || m.depth == 0 || m.device_bps == 0 {
            return Err("a zero time, depth or chunk".into());
        }
        Ok(m)
    }

    /// One line for `params.host_disk`.
    pub fn summary(&self) -> String {
        let p = self.params();
        format!(
            "{} on {} ({}): 4KiB read {} us, {} KiB read {} us, write {} us, {} IOPS at depth {}, \
             {} B/s at most at depth => bandwidth={}B/s write_bandwidth={}B/s latency={}ns \
             spindles={} chunk={} device_bandwidth={}B/s",
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
            p.device_bandwidth_bps
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
            // An older schema lacks figures the model now takes: measured again, below.
            let older = text.contains("\"vmlab.host-disk/") && !text.contains(SCHEMA);
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

/// `max_sectors_kb` of the device holding `dir` (or of its whole disk, for a partition).
fn max_sectors_bytes(device: &str) -> Option<u64> {
    let base = PathBuf::from(format!("/sys/dev/block/{device}"));
    for q in [base.join("queue/max_sectors_kb"), base.join("../queue/max_sectors_kb")] {
        if let Some(kb) = std::fs::read_to_string(q).ok().and_then(|t| t.trim().parse::<u64>().ok()) {
            return Some(kb * 1024);
        }
    }
    None
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

/// The measurement: a 256 MiB scratch file in `dir`, preallocated, written twice (the second
/// pass timed) and read once in chunks, then 2,000 4 KiB reads alone and as many with [`DEPTH`] threads reading at once, then
/// the file once over by each of [`DEVICE_PROBE`]'s mixes; about two seconds on a fast disk. The file is removed.
pub fn measure(dir: &Path) -> Result<Measured, String> {
    let device = device_of(dir)?;
    let chunk = max_sectors_bytes(&device).unwrap_or(1 << 20).clamp(2 * SMALL, 64 << 20);
    let path = dir.join(format!("vmlab-disk-probe-{}", std::process::id()));
    let r = measure_file(&path, chunk);
    let _ = std::fs::remove_file(&path);
    let (read_4k_ns, read_chunk_ns, write_chunk_ns, iops_at_depth, device_bps) =
        r.map_err(|e| format!("{}: {e}", path.display()))?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    Ok(Measured {
        dir: dir.display().to_string(),
        device,
        kernel,
        chunk_bytes: chunk,
        read_4k_ns,
        read_chunk_ns,
        write_chunk_ns,
        iops_at_depth,
        depth: DEPTH,
        device_bps,
    })
}

fn measure_file(path: &Path, chunk: u64) -> std::io::Result<(u64, u64, u64, u64, u64)> {
    let f =
        std::fs::OpenOptions::new().read(true).write(true).create_new(true).custom_flags(libc::O_DIRECT).open(path)?;
    let chunks = (SCRATCH_BYTES / chunk).max(4);
    let size = chunks * chunk;
    // SAFETY: a valid open descriptor; fallocate only sizes the file.
    if unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, 0, size as libc::off_t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut big = Aligned::new(chunk as usize);
    big.buf().iter_mut().enumerate().for_each(|(i, b)| *b = (i * 7 + 1) as u8);
    for i in 0..chunks {
        f.write_all_at(big.buf(), i * chunk)?;
    }
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
    Ok((read_4k_ns, read_chunk_ns, write_chunk_ns, iops, device_bps.max(1)))
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
            h.join().map_err(|_| std::io::Error::other("a reader thread panicked"))??;
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
        }
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
    fn the_cache_round_trips_and_bad_files_are_errors() {
        let m = sample();
        let text = serde_json::to_string(&m.to_json()).unwrap();
        assert_eq!(Measured::from_json(&text).unwrap(), m);
        assert!(Measured::from_json("{").unwrap_err().contains("not JSON"));
        assert!(Measured::from_json("{\"schema\":\"x\"}").unwrap_err().contains("vmlab.host-disk/3"));
        let no_depth = text.replace("\"depth\":32", "\"depth\":\"a\"");
        assert!(Measured::from_json(&no_depth).unwrap_err().contains("depth"));
        let zero = text.replace("\"read_4k_ns\":50000", "\"read_4k_ns\":0");
        assert!(Measured::from_json(&zero).is_err());
        let older = text.replace("\"device_bps\":1200000000,", "");
        assert!(Measured::from_json(&older).unwrap_err().contains("device_bps"));
    }
}
