//! Whether the host's file system reads regular files into large folios, for `[[disk]]
//! large_folios`: `mapping_set_large_folios` is set by XFS since 5.18 and by ext4 since 6.16,
//! where `ext4_should_enable_large_folio` refuses journalled data (and encryption, verity and
//! DAX, which a mount line does not show: an image made with those reads in single pages
//! although this says otherwise). Read from `proc/sys/kernel/osrelease` and `proc/mounts` under
//! the root, for the mount holding `dir`.

use std::path::Path;

/// (major, minor) of a release string such as `6.18.0-12-generic`.
fn release(s: &str) -> Option<(u32, u32)> {
    let mut it = s.trim().split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The mount line (file system type, options) whose mount point is the longest prefix of `dir`.
fn mount_of<'a>(mounts: &'a str, dir: &Path) -> Option<(&'a str, &'a str)> {
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && dir.starts_with(f[1])).then(|| (f[1].len(), f[2], f[3]))
        })
        .max_by_key(|&(n, _, _)| n)
        .map(|(_, t, o)| (t, o))
}

/// Whether `fstype` mounted with `opts` on kernel `rel` sets large folios on regular files.
fn sets_large_folios(rel: (u32, u32), fstype: &str, opts: &str) -> bool {
    match fstype {
        "xfs" => rel >= (5, 18),
        "ext4" => {
            rel >= (6, 16) && !opts.split(',').any(|o| o == "data=journal" || o == "dax" || o.starts_with("dax="))
        }
        _ => false,
    }
}

/// Whether the host's readahead keeps its folio order in `file_ra_state` (profile
/// `ra_order_in_state`): Ryan Roberts' "mm/readahead: Store folio order in struct
/// file_ra_state" (Jun 2025), in releases from 6.17.
fn keeps_ra_order(rel: (u32, u32)) -> bool {
    rel >= (6, 17)
}

/// The answer for the host's kernel, None when its release cannot be read.
pub fn ra_order_in_state(root: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    Some(keeps_ra_order(rel))
}

/// Whether the host's limit reclaim reads memcg statistics as the periodic flush left them
/// (profile `memcg_flush_ratelimited`): Shakeel Butt's "memcg: use ratelimited stats flush in
/// the reclaim", posted 13 Aug 2024 and so in the 6.12 merge window at the earliest. The
/// release is taken from the patch's date, not read from a stored tree.
fn ratelimits_reclaim_flush(rel: (u32, u32)) -> bool {
    rel >= (6, 12)
}

/// The answer for the host's kernel, None when its release cannot be read.
pub fn memcg_flush_ratelimited(root: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    Some(ratelimits_reclaim_flush(rel))
}

/// The answer for the file system holding `dir`, None when the files are not there to say.
pub fn large_folios(root: &Path, dir: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).ok()?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (t, o) = mount_of(&mounts, &dir)?;
    Some(sets_large_folios(rel, t, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "/dev/vda1 / ext4 rw,relatime 0 0\n\
        tmpfs /tmp tmpfs rw 0 0\n\
        /dev/loop0 /mnt/j ext4 rw,relatime,data=journal 0 0\n\
        /dev/vdb /srv xfs rw 0 0\n";

    #[test]
    fn the_mount_and_kernel_decide() {
        assert!(ratelimits_reclaim_flush((6, 18)) && ratelimits_reclaim_flush((6, 12)));
        assert!(!ratelimits_reclaim_flush((6, 8)) && !ratelimits_reclaim_flush((6, 11)));
        assert_eq!(release("6.18.0-12-generic\n"), Some((6, 18)));
        assert_eq!(release("x"), None);
        let at = |d: &str| mount_of(MOUNTS, Path::new(d)).unwrap();
        assert_eq!(at("/var/tmp"), ("ext4", "rw,relatime"));
        assert_eq!(at("/mnt/j/x").0, "ext4");
        assert_eq!(at("/tmp/x").0, "tmpfs");
        let (t, o) = at("/var/tmp");
        assert!(sets_large_folios((6, 18), t, o));
        assert!(!sets_large_folios((6, 8), t, o), "6.8's ext4 reads single pages");
        let (t, o) = at("/mnt/j");
        assert!(!sets_large_folios((6, 18), t, o), "data=journal turns them off");
        assert!(sets_large_folios((5, 18), "xfs", "rw") && !sets_large_folios((5, 17), "xfs", "rw"));
        assert!(!sets_large_folios((6, 18), "tmpfs", "rw"));
        assert!(keeps_ra_order((6, 18)) && !keeps_ra_order((6, 16)) && !keeps_ra_order((6, 8)));
    }
}
