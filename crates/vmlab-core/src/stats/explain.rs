//! `vmlab explain`: why kswapd was awake. Each kswapd step is charged to the condition its era's
//! kswapd tests that kept it running when the step began (2.4.9's `free_shortage()` /
//! `inactive_shortage()`, 2.4.23aa's `need_balance` zone, 2.6.36/38's per-zone high watermark at
//! the order it balances for, 6.8's `pgdat_balanced()`), so the answer is the engine's own test,
//! not a guess from the counters.

use std::fmt::Write as _;

use crate::kernel::Kernel;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// 2.4.9 `free_shortage()`: a zone's free + inactive_clean below pages_low (or all zones'
    /// below freepages.high).
    FreeShortage,
    /// 2.4.9 `inactive_shortage()`: a zone's inactive + free below pages_high (or the global
    /// target).
    InactiveShortage,
    /// A zone fails its high watermark at the order kswapd balances for.
    BelowHigh,
    /// 6.8 `pgdat_balanced()`: no zone up to the classzone meets its high watermark.
    NoZoneAboveHigh,
    /// 2.4.23aa: a zone still marked `need_balance`.
    NeedBalance,
    /// The engine's test passes: kswapd is finishing a pass or deciding to sleep.
    Balanced,
}

/// What kept kswapd awake: the test, the zone it names (None: the node or all zones), the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reason {
    pub why: Why,
    pub node: usize,
    pub zone: Option<usize>,
    pub order: u32,
}

impl Reason {
    pub fn new(why: Why, node: usize, zone: Option<usize>, order: u32) -> Reason {
        Reason { why, node, zone, order }
    }
}

/// kswapd CPU time and steps by reason, in the order reasons were first seen.
#[derive(Clone, Debug, Default)]
pub struct KswapdWhy {
    pub rows: Vec<(Reason, u64, u64)>,
}

impl KswapdWhy {
    pub fn add(&mut self, r: Reason, ns: u64) {
        // A balanced node is one row, whatever order or zone the engine was at.
        let r = if r.why == Why::Balanced { Reason::new(Why::Balanced, r.node, None, 0) } else { r };
        match self.rows.iter_mut().find(|x| x.0 == r) {
            Some(row) => {
                row.1 += ns;
                row.2 += 1;
            }
            None => self.rows.push((r, ns, 1)),
        }
    }
}

fn zone_name(k: &Kernel, z: Option<usize>) -> String {
    match z {
        Some(z) if k.nodes.len() > 1 => format!("{} (node {})", k.zones[z].kind.name(), k.zones[z].node),
        Some(z) => k.zones[z].kind.name().to_string(),
        None => "all zones".into(),
    }
}

/// One line of text for a reason.
pub fn describe(k: &Kernel, r: &Reason) -> String {
    let z = zone_name(k, r.zone);
    match (r.why, r.zone) {
        (Why::FreeShortage, Some(_)) => format!("free_shortage(): {z} free + inactive_clean below pages_low"),
        (Why::FreeShortage, None) => "free_shortage(): free + inactive_clean of all zones below freepages.high".into(),
        (Why::InactiveShortage, Some(_)) => format!("inactive_shortage(): {z} free + inactive below pages_high"),
        (Why::InactiveShortage, None) => {
            "inactive_shortage(): all zones' free + inactive below freepages.high + inactive_target".into()
        }
        (Why::BelowHigh, _) => format!("{z} below its high watermark for order {}", r.order),
        (Why::NoZoneAboveHigh, _) => {
            format!("pgdat_balanced(): no zone up to {z} meets its high watermark for order {}", r.order)
        }
        (Why::NeedBalance, _) => format!("kswapd_balance(): {z} marked need_balance"),
        (Why::Balanced, _) => "balanced: finishing a pass or deciding to sleep".into(),
    }
}

/// The kswapd part of `vmlab explain`: CPU time by reason, largest first.
pub fn format_kswapd(k: &Kernel, elapsed_s: f64) -> String {
    let mut o = String::new();
    let total: u64 = k.kswapd_why.rows.iter().map(|r| r.1).sum();
    let nodes = k.nodes.len().max(1) as f64;
    let _ = writeln!(
        o,
        "kswapd: {:.2} CPU s over {:.1} s ({:.1} % of a CPU per node)",
        total as f64 / 1e9,
        elapsed_s,
        if elapsed_s > 0.0 { 100.0 * total as f64 / 1e9 / elapsed_s / nodes } else { 0.0 }
    );
    if total == 0 {
        let _ = writeln!(o, "  kswapd did no work: no zone fell below the line its era wakes kswapd at");
        return o;
    }
    let _ = writeln!(o, "  time by what kept kswapd awake when each step began (the engine's own test):");
    let _ = writeln!(o, "  {:>10} {:>6} {:>10}  reason", "CPU s", "%", "steps");
    let mut rows = k.kswapd_why.rows.clone();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    for (r, ns, steps) in rows.iter().filter(|r| r.1 > 0) {
        let _ = writeln!(
            o,
            "  {:>10.2} {:>6.1} {:>10}  {}",
            *ns as f64 / 1e9,
            100.0 * *ns as f64 / total as f64,
            steps,
            describe(k, r)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_add_up_by_reason() {
        let mut w = KswapdWhy::default();
        let a = Reason::new(Why::FreeShortage, 0, Some(0), 0);
        let b = Reason::new(Why::BelowHigh, 0, Some(2), 3);
        w.add(a, 10);
        w.add(b, 5);
        w.add(a, 7);
        assert_eq!(w.rows, vec![(a, 17, 2), (b, 5, 1)]);
    }
}
