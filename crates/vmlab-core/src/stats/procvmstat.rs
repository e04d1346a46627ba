//! `/proc/vmstat` text: one `name value` line per counter, the `nr_*` gauges first (in the order
//! given), then the event counters in `Vm::ALL` order, as `mm/vmstat.c` prints them.

use super::vmstat::{Vm, VmEvents};
use std::fmt::Write;

pub fn format_proc_vmstat(gauges: &[(&str, u64)], events: &VmEvents) -> String {
    let mut s = String::new();
    for (name, v) in gauges {
        let _ = writeln!(s, "{name} {v}");
    }
    for &c in Vm::ALL {
        let _ = writeln!(s, "{} {}", c.name(), events.get(c));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_then_events_in_kernel_order() {
        let mut ev = VmEvents::default();
        ev.add(Vm::Pgpgin, 493588);
        ev.inc(Vm::Pswpout);
        let s = format_proc_vmstat(&[("nr_free_pages", 12345), ("nr_inactive_anon", 7)], &ev);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 2 + Vm::COUNT);
        assert_eq!(
            &lines[..6],
            &["nr_free_pages 12345", "nr_inactive_anon 7", "pgpgin 493588", "pgpgout 0", "pswpin 0", "pswpout 1"]
        );
        assert_eq!(*lines.last().unwrap(), format!("{} 0", Vm::ALL[Vm::COUNT - 1].name()));
        assert!(s.ends_with('\n'));
    }
}
