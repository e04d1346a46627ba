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

/// The answer for the file system holding `dir`, None when the files are not there to say.
pub fn large_folios(root: &Path, dir: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).ok()?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (t, o) = mount_of(&mounts, &dir)?;
    Some(sets_large_folios(rel, t, o))
}

/// Whether the host's readahead reads a synchronous miss in order-0 folios (off
/// `reclaim.ra_sync_order_ramp`): Ryan Roberts' readahead series keeps the order in
/// `file_ra_state` and ramps it only on the asynchronous path. Its v5 was posted on 9 Jun 2025,
/// after 6.16's merge window, so 6.17 is taken as the first release with it (not checked in a
/// 6.17 tree; on the 6.18 development host a cold read of small files charges its cgroup one
/// `pgpgin` a page: docs/REAL.md, "What a folio costs").
pub fn sync_ra_order0(root: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    Some(rel >= (6, 17))
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
    }

    #[test]
    fn a_sync_miss_reads_order_0_from_6_17() {
        let d = std::env::temp_dir().join(format!("vmlab-folios-test-{}", std::process::id()));
        std::fs::create_dir_all(d.join("proc/sys/kernel")).unwrap();
        for (rel, want) in
            [("6.18.44-fc\n", Some(true)), ("6.17.0\n", Some(true)), ("6.8.0-31-generic\n", Some(false)), ("x", None)]
        {
            std::fs::write(d.join("proc/sys/kernel/osrelease"), rel).unwrap();
            assert_eq!(sync_ra_order0(&d), want, "{rel}");
        }
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(sync_ra_order0(&d), None, "no /proc to read");
    }
}
