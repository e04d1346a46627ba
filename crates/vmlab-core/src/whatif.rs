//! Labelled what-ifs: departures from every modelled kernel, switched on only by an observer
//! harness (`examples/kswapd_runs`' `whatif.*` keys) to test which way a cause runs. No profile
//! and no scenario key sets them, and all off (the default) is the kernel as modelled. A run
//! with one on is not a kernel's behaviour and says so in its output.

use crate::mmzone::ZoneType;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WhatIf {
    /// kswapd's `balance_pgdat` runs at order > 0 leave zones of this type out: such a zone is
    /// not a candidate for `end_zone`, is not shrunk, and does not keep the run from ending
    /// balanced; `sleeping_prematurely` holds it to order 0 only. Its order-0 balance is left
    /// to kswapd's order-0 runs. 2.6.36–2.6.38 instead balance every zone up to `end_zone` at
    /// the run's order and shrink each that fails 8 × HIGH at that order.
    pub kswapd_high_order_spares: Option<ZoneType>,
    /// `__rmqueue_fallback` serves no order-0 unmovable request from another migrate type's
    /// lists in zones of this type: with the unmovable lists empty the take fails there (after
    /// the MIGRATE_RESERVE lists), and the allocation goes on down the zonelist or into the
    /// slow path. The kernels steal the largest block of the fallback types instead.
    pub unmovable_o0_steal_refused: Option<ZoneType>,
    /// The pages kswapd's reclaim frees in zones of this type go straight to the buddy lists
    /// (`free_one_page`, merging with free buddies at once) instead of the tail of kswapd's
    /// per-CPU list, from where the kernels' cold frees are reused by the next allocations on
    /// that CPU or drained in batches of `pcp->batch`. Tests whether the one-list reuse keeps
    /// the blocks an order-3 run frees whole (history §48.6 item 1, §49).
    pub kswapd_frees_to_buddy: Option<ZoneType>,
}

impl WhatIf {
    /// `key=value` from a harness's command line; Err says what was expected.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        const ZONES: [ZoneType; 5] =
            [ZoneType::Dma, ZoneType::Dma32, ZoneType::Normal, ZoneType::HighMem, ZoneType::Movable];
        let Some(&zone) = ZONES.iter().find(|z| z.name().eq_ignore_ascii_case(value)) else {
            let names: Vec<String> = ZONES.iter().map(|z| z.name().to_ascii_lowercase()).collect();
            return Err(format!("{key}: a zone type ({}), got {value:?}", names.join(", ")));
        };
        let slot = match key {
            "whatif.kswapd_high_order_spares" => &mut self.kswapd_high_order_spares,
            "whatif.unmovable_o0_steal_refused" => &mut self.unmovable_o0_steal_refused,
            "whatif.kswapd_frees_to_buddy" => &mut self.kswapd_frees_to_buddy,
            _ => return Err(format!("{key}: not a what-if ({})", WhatIf::KEYS.join(", "))),
        };
        *slot = Some(zone);
        Ok(())
    }

    /// The keys `set` takes.
    pub const KEYS: [&'static str; 3] =
        ["whatif.kswapd_high_order_spares", "whatif.unmovable_o0_steal_refused", "whatif.kswapd_frees_to_buddy"];

    /// A label for output: "none", or the what-ifs on.
    pub fn label(&self) -> String {
        let mut v = Vec::new();
        if let Some(z) = self.kswapd_high_order_spares {
            v.push(format!("kswapd_high_order_spares={}", z.name()));
        }
        if let Some(z) = self.unmovable_o0_steal_refused {
            v.push(format!("unmovable_o0_steal_refused={}", z.name()));
        }
        if let Some(z) = self.kswapd_frees_to_buddy {
            v.push(format!("kswapd_frees_to_buddy={}", z.name()));
        }
        if v.is_empty() {
            "none".into()
        } else {
            v.join(",")
        }
    }
}
