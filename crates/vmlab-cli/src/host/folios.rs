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
    mount_line_of(mounts, dir).map(|(_, t, o)| (t, o))
}

/// The same line's (source, file system type, options).
fn mount_line_of<'a>(mounts: &'a str, dir: &Path) -> Option<(&'a str, &'a str, &'a str)> {
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && dir.starts_with(f[1])).then(|| (f[1].len(), f[0], f[2], f[3]))
        })
        .max_by_key(|&(n, ..)| n)
        .map(|(_, s, t, o)| (s, t, o))
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

/// Whether the host's writeback throttle gives every swap write `max_depth` in its own queue
/// (profile `wbt_swap_hiprio`): Baokun Li's "blk-wbt: don't throttle swap writes in direct
/// reclaim" (linux-block, 4 Jun 2024), listed in Jens Axboe's for-6.11/block pull, so from
/// 6.11. The release is taken from the pull, not read from a stored tree.
fn swap_writes_hiprio(rel: (u32, u32)) -> bool {
    rel >= (6, 11)
}

/// The answer for the host's kernel, None when its release cannot be read.
pub fn wbt_swap_hiprio(root: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    Some(swap_writes_hiprio(rel))
}

/// The answer for the file system holding `dir`, None when the files are not there to say.
pub fn large_folios(root: &Path, dir: &Path) -> Option<bool> {
    let rel = release(&std::fs::read_to_string(root.join("proc/sys/kernel/osrelease")).ok()?)?;
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).ok()?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (t, o) = mount_of(&mounts, &dir)?;
    Some(sets_large_folios(rel, t, o))
}

/// Whether the ext4 file system holding `dir` ends writeback per io_end (`[[disk]]
/// io_end_pages`): with `dioread_nolock` (the default since 5.6) `ext4_writepages` reserves a
/// conversion handle for every extent it maps (`ext4_should_dioread_nolock`), so the io_end is
/// unwritten and its folios' writeback ends in `ext4_end_io_rsv_work`, after the last bio
/// (fs/ext4/inode.c, fs/ext4/page-io.c). `/proc/mounts` does not list default options;
/// `proc/fs/ext4/<device>/options` lists them all. None when the files are not there to say.
pub fn dioread_nolock(root: &Path, dir: &Path) -> Option<bool> {
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).ok()?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let (src, t, _) = mount_line_of(&mounts, &dir)?;
    if t != "ext4" {
        return Some(false);
    }
    // The directory is the block device's name (`sb->s_id`): `/dev/mapper/x` links to `dm-N`.
    let dev = root.join(src.trim_start_matches('/'));
    let dev = dev.canonicalize().unwrap_or(dev);
    let name = dev.file_name()?.to_str()?;
    let opts = std::fs::read_to_string(root.join("proc/fs/ext4").join(name).join("options")).ok()?;
    Some(opts.lines().any(|o| o.trim() == "dioread_nolock"))
}

/// ext4's `MAX_WRITEPAGES_EXTENT_LEN` (fs/ext4/inode.c): the most blocks `mpage_prepare_extent_to_map`
/// gathers into one extent, so into one io_end (4 KiB blocks: pages).
pub const EXT4_IO_END_PAGES: u32 = 2048;

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
        assert!(swap_writes_hiprio((6, 18)) && swap_writes_hiprio((6, 11)));
        assert!(!swap_writes_hiprio((6, 10)) && !swap_writes_hiprio((6, 8)));
    }

    /// `proc/fs/ext4/<dev>/options` of the mount holding the directory decides, one option a line.
    #[test]
    fn dioread_nolock_from_the_mounts_options() {
        let d = std::env::temp_dir().join(format!("vmlab-dioread-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let put = |p: &str, t: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        put("proc/mounts", MOUNTS);
        put("proc/fs/ext4/loop0/options", "rw\nbsddf\ndioread_nolock\ndata=journal\n");
        put("proc/fs/ext4/vda1/options", "rw\nbsddf\nnodioread_nolock\ndata=ordered\n");
        assert_eq!(dioread_nolock(&d, Path::new("/mnt/j/x")), Some(true));
        assert_eq!(dioread_nolock(&d, Path::new("/var/tmp")), Some(false), "nodioread_nolock is not it");
        assert_eq!(dioread_nolock(&d, Path::new("/srv")), Some(false), "not ext4");
        std::fs::remove_file(d.join("proc/fs/ext4/loop0/options")).unwrap();
        assert_eq!(dioread_nolock(&d, Path::new("/mnt/j")), None, "no options file: nothing to say");
        let _ = std::fs::remove_dir_all(&d);
    }
}
