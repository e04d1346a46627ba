//! `/proc/meminfo` in the kernel's text format (6.8 `fs/proc/meminfo.c`, `show_val_kb`): a
//! 16-column label field, the value right-aligned in width 8 (wider values just widen), ` kB`.

/// The `/proc/meminfo` fields vmlab models, all in kB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meminfo {
    pub mem_total: u64,
    pub mem_free: u64,
    pub mem_available: u64,
    pub buffers: u64,
    pub cached: u64,
    pub swap_cached: u64,
    pub active: u64,
    pub inactive: u64,
    pub active_anon: u64,
    pub inactive_anon: u64,
    pub active_file: u64,
    pub inactive_file: u64,
    pub unevictable: u64,
    pub mlocked: u64,
    /// HighTotal/HighFree/LowTotal/LowFree: present only on highmem (32-bit era) machines.
    pub highmem: Option<HighMem>,
    pub swap_total: u64,
    pub swap_free: u64,
    pub dirty: u64,
    pub writeback: u64,
    pub anon_pages: u64,
    pub mapped: u64,
    pub shmem: u64,
    pub slab: u64,
    pub s_reclaimable: u64,
    pub s_unreclaim: u64,
    pub kernel_stack: u64,
    pub page_tables: u64,
    /// Present only for profiles with quicklists (CONFIG_QUICKLIST, 2.6.22 .. 5.3).
    pub quicklists: Option<u64>,
    pub commit_limit: u64,
    pub committed_as: u64,
}

/// The CONFIG_HIGHMEM lines of `/proc/meminfo`, in kB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HighMem {
    pub high_total: u64,
    pub high_free: u64,
    pub low_total: u64,
    pub low_free: u64,
}

/// (kernel field name, kB) in the order the kernel prints them; optional fields only when present.
pub fn to_map(m: &Meminfo) -> Vec<(&'static str, u64)> {
    let mut v = vec![
        ("MemTotal", m.mem_total),
        ("MemFree", m.mem_free),
        ("MemAvailable", m.mem_available),
        ("Buffers", m.buffers),
        ("Cached", m.cached),
        ("SwapCached", m.swap_cached),
        ("Active", m.active),
        ("Inactive", m.inactive),
        ("Active(anon)", m.active_anon),
        ("Inactive(anon)", m.inactive_anon),
        ("Active(file)", m.active_file),
        ("Inactive(file)", m.inactive_file),
        ("Unevictable", m.unevictable),
        ("Mlocked", m.mlocked),
    ];
    if let Some(h) = m.highmem {
        v.extend([
            ("HighTotal", h.high_total),
            ("HighFree", h.high_free),
            ("LowTotal", h.low_total),
            ("LowFree", h.low_free),
        ]);
    }
    v.extend([
        ("SwapTotal", m.swap_total),
        ("SwapFree", m.swap_free),
        ("Dirty", m.dirty),
        ("Writeback", m.writeback),
        ("AnonPages", m.anon_pages),
        ("Mapped", m.mapped),
        ("Shmem", m.shmem),
        ("Slab", m.slab),
        ("SReclaimable", m.s_reclaimable),
        ("SUnreclaim", m.s_unreclaim),
        ("KernelStack", m.kernel_stack),
        ("PageTables", m.page_tables),
    ]);
    if let Some(q) = m.quicklists {
        v.push(("Quicklists", q));
    }
    v.extend([("CommitLimit", m.commit_limit), ("Committed_AS", m.committed_as)]);
    v
}

/// One `/proc/meminfo` line: `MemTotal:        2097152 kB`.
pub fn format_line(name: &str, kb: u64) -> String {
    format!("{:<16}{:>8} kB\n", format!("{name}:"), kb)
}

/// The whole `/proc/meminfo` text.
pub fn format_meminfo(m: &Meminfo) -> String {
    to_map(m).into_iter().map(|(n, v)| format_line(n, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_format_matches_kernel() {
        assert_eq!(format_line("MemTotal", 2097152), "MemTotal:        2097152 kB\n");
        assert_eq!(format_line("Inactive(anon)", 0), "Inactive(anon):        0 kB\n");
        assert_eq!(format_line("Committed_AS", 241588), "Committed_AS:     241588 kB\n");
        // Wider than 8 digits: the number just widens, as seq_put_decimal_ull_width does.
        assert_eq!(format_line("CommitLimit", 123456789), "CommitLimit:    123456789 kB\n");
    }

    #[test]
    fn optional_fields_and_order() {
        let mut m = Meminfo { mem_total: 2097152, mem_free: 1024, ..Default::default() };
        let names: Vec<_> = to_map(&m).iter().map(|x| x.0).collect();
        assert_eq!(names.len(), 28);
        assert!(!names.contains(&"HighTotal") && !names.contains(&"Quicklists"));
        m.highmem = Some(HighMem { high_total: 1, high_free: 2, low_total: 3, low_free: 4 });
        m.quicklists = Some(5);
        let names: Vec<_> = to_map(&m).iter().map(|x| x.0).collect();
        assert_eq!(names.len(), 33);
        assert_eq!(&names[13..19], &["Mlocked", "HighTotal", "HighFree", "LowTotal", "LowFree", "SwapTotal"]);
        assert_eq!(&names[29..], &["PageTables", "Quicklists", "CommitLimit", "Committed_AS"]);
        let text = format_meminfo(&m);
        assert!(text.starts_with("MemTotal:        2097152 kB\nMemFree:            1024 kB\n"));
        assert!(text.contains("\nHighTotal:             1 kB\n"));
        assert!(
            text.ends_with("Quicklists:            5 kB\nCommitLimit:           0 kB\nCommitted_AS:          0 kB\n")
        );
        assert_eq!(text.lines().count(), 33);
    }
}
