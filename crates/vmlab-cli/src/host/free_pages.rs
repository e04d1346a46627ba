//! The guest's free memory as free page reporting has left it (`machine.reported_at_start`,
//! `unreported_small`, `unreported_large`): how much lies in blocks below the reporting order,
//! which no pass takes, and how much of the larger blocks is not reported yet. On a guest whose
//! hypervisor discards reported memory, a frame's first touch costs what its state says
//! (docs/REAL.md, sys31), so `vmlab real` notes these at its workload's start and `run --host`
//! starts its machine from them.
//!
//! `/proc/buddyinfo` gives the free blocks per order; `/proc/kpageflags` marks a reported block's
//! first page `KPF_BUDDY | KPF_UPTODATE` (`PG_reported` is `PG_uptodate`'s bit, valid on a free
//! block's head only). A reported block is aligned to its order, at least the reporting order,
//! so only every `2^order`-th entry is read: a head at a `2^(order+1)` boundary whose buddy is
//! free and not itself a reported head is one block of the next order (two free buddies of one
//! migrate type merge), as the 6.18 kernel shows a free block's every page `KPF_BUDDY`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const KPF_UPTODATE: u64 = 1 << 3;
const KPF_BUDDY: u64 = 1 << 10;
/// MAX_PAGE_ORDER on x86_64 (6.x): the largest free block is 2^10 pages.
const MAX_PAGE_ORDER: u32 = 10;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreeState {
    /// Free bytes in blocks below the reporting order.
    pub small: u64,
    /// Free bytes in blocks of the reporting order or more.
    pub large: u64,
    /// Of `large`, the bytes in blocks flagged reported.
    pub reported: u64,
}

impl FreeState {
    pub fn unreported_large(&self) -> u64 {
        self.large.saturating_sub(self.reported)
    }
}

/// Bytes free below and at or above `order`, from `/proc/buddyinfo`'s per-order block counts.
fn buddyinfo(text: &str, order: u32) -> Result<(u64, u64), String> {
    let (mut small, mut large) = (0u64, 0u64);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // "Node 0, zone   Normal   538  499 ...": the counts follow the zone's name.
        let counts = line.split_whitespace().skip(4);
        for (o, c) in counts.enumerate() {
            let n: u64 = c.parse().map_err(|_| format!("`{line}`: not a block count: `{c}`"))?;
            let bytes = n << (o as u32 + 12);
            if (o as u32) < order {
                small += bytes;
            } else {
                large += bytes;
            }
        }
    }
    Ok((small, large))
}

/// The flags of frame `pfn`, or None past the end of the map.
fn flags(f: &File, pfn: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, pfn * 8).ok()?;
    Some(u64::from_le_bytes(b))
}

/// The bytes in free blocks flagged reported, walking every `2^order`-th frame.
fn reported(f: &File, order: u32) -> u64 {
    let step = 1u64 << order;
    let (mut pfn, mut bytes) = (0u64, 0u64);
    while let Some(fl) = flags(f, pfn) {
        let head = KPF_BUDDY | KPF_UPTODATE;
        if fl & head == head {
            let mut o = order;
            while o < MAX_PAGE_ORDER && pfn % (2 << o) == 0 {
                match flags(f, pfn + (1 << o)) {
                    Some(b) if b & head == KPF_BUDDY => o += 1,
                    _ => break,
                }
            }
            bytes += 4096 << o;
            pfn += 1 << o;
        } else {
            pfn += step;
        }
    }
    bytes
}

/// The free state under `root` (`/` on the host) for reporting order `order`.
pub fn read(root: &Path, order: u8) -> Result<FreeState, String> {
    let order = order as u32;
    let bi = root.join("proc/buddyinfo");
    let text = std::fs::read_to_string(&bi).map_err(|e| format!("{}: {e}", bi.display()))?;
    let (small, large) = buddyinfo(&text, order).map_err(|e| format!("{}: {e}", bi.display()))?;
    let kp = root.join("proc/kpageflags");
    let f = File::open(&kp).map_err(|e| format!("{}: {e}", kp.display()))?;
    Ok(FreeState { small, large, reported: reported(&f, order).min(large) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buddyinfo_splits_at_the_reporting_order() {
        let t = "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n\
                 Node 0, zone   Normal      2      1      0      0      0      0      0      0      0      1      2 \n";
        let (small, large) = buddyinfo(t, 9).unwrap();
        assert_eq!(small, (256 + 2 + 2) * 4096);
        assert_eq!(large, (512 + 512 + 3 * 1024 + 2 * 1024) * 4096);
        assert!(buddyinfo("Node 0, zone Normal 1 x", 9).unwrap_err().contains("not a block count"));
    }

    #[test]
    fn a_reported_head_is_sized_by_its_free_buddy() {
        // Frames 0..1024 one reported order-10 block; 1024..1536 a reported order-9 block whose
        // buddy is in use; 2048..2560 free but not reported.
        let mut fl = vec![0u64; 4096];
        fl[..1024].fill(KPF_BUDDY);
        fl[0] |= KPF_UPTODATE;
        fl[1024..1536].fill(KPF_BUDDY);
        fl[1024] |= KPF_UPTODATE;
        fl[1536..2048].fill(0x28);
        fl[2048..2560].fill(KPF_BUDDY);
        let dir = std::env::temp_dir().join(format!("vmlab-kpf-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        let bytes: Vec<u8> = fl.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(dir.join("proc/kpageflags"), bytes).unwrap();
        std::fs::write(dir.join("proc/buddyinfo"), "Node 0, zone Normal 0 0 0 0 0 0 0 0 0 2 1\n").unwrap();
        let s = read(&dir, 9).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.reported, (1024 + 512) * 4096);
        assert_eq!(s.unreported_large(), 512 * 4096);
        assert_eq!(s.small, 0);
    }
}
