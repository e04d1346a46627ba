//! A disk's `bdi_writeback` write-bandwidth estimate (`mm/backing-dev.c` `wb_init` starts it at
//! `INIT_BW`; `mm/page-writeback.c` `wb_update_write_bandwidth`, `__wb_update_bandwidth`,
//! `wb_bandwidth_estimate_start`, `do_writepages`; Wu Fengguang, "writeback: bdi write bandwidth
//! estimation", 2011, and Jan Kara's 5.14 rework, "writeback: Fix bandwidth estimate for spiky
//! workload"; read in stored 6.x copies of mm/page-writeback.c). 6.8's flusher sizes its chunks
//! from `avg_write_bandwidth` (`writeback_chunk_size`), so what the estimate is early in a run —
//! it starts at 100 MiB/s and follows the device over a period of seconds — decides how much
//! the flusher writes of an inode at a time.

/// `INIT_BW`: 100 MiB/s, in pages a second.
const INIT_BW: u64 = 100 << 8;
/// `BANDWIDTH_INTERVAL` (HZ/5): the estimate is refreshed at most this often.
const BANDWIDTH_INTERVAL_NS: u64 = 200_000_000;
/// `WB_BANDWIDTH_IDLE_JIF` (HZ): a device idle this long does not count its idle time.
const IDLE_NS: u64 = 1_000_000_000;
/// `roundup_pow_of_two(3 * HZ)` jiffies, in ms (HZ 1000 and 250 give the same 4.096 s): the
/// estimate's averaging period.
const PERIOD_MS: u64 = 4096;

#[derive(Clone, Copy, Debug)]
pub struct BdiWriteback {
    /// `WB_WRITTEN`: pages of the disk's files whose writeback ended.
    pub written: u64,
    written_stamp: u64,
    bw_time_stamp: u64,
    /// Pages a second: the last period's estimate and its smoothed form.
    write_bandwidth: u64,
    pub avg_write_bandwidth: u64,
    /// Pages of the disk's files under writeback (`writeback_inodes` stands for it: the
    /// estimate only restarts while none is in flight).
    pub nr_writeback: u64,
}

impl Default for BdiWriteback {
    fn default() -> Self {
        BdiWriteback {
            written: 0,
            written_stamp: 0,
            bw_time_stamp: 0,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            nr_writeback: 0,
        }
    }
}

impl BdiWriteback {
    /// `wb_bandwidth_estimate_start` (at `do_writepages`' start): after an idle second the
    /// estimate restarts from now rather than averaging the idle time in.
    pub fn estimate_start(&mut self, now: u64) {
        if now.saturating_sub(self.bw_time_stamp) > IDLE_NS && self.nr_writeback == 0 {
            self.written_stamp = self.written;
            self.bw_time_stamp = now;
        }
    }

    /// `do_writepages`' end: refresh the estimate if `BANDWIDTH_INTERVAL` has passed.
    pub fn update_if_due(&mut self, now: u64) {
        if now >= self.bw_time_stamp + BANDWIDTH_INTERVAL_NS {
            self.update(now);
        }
    }

    /// `__wb_update_bandwidth` → `wb_update_write_bandwidth`: the pages written since the last
    /// update, averaged over the period with the previous estimate, then smoothed once more:
    /// `avg_write_bandwidth` moves an eighth of the way towards the previous estimate only
    /// while that lies between it and the new one (spikes are filtered out).
    fn update(&mut self, now: u64) {
        let elapsed = (now.saturating_sub(self.bw_time_stamp) / 1_000_000).max(1);
        let mut bw = self.written.saturating_sub(self.written_stamp) * 1000;
        let old = self.write_bandwidth;
        let mut avg = self.avg_write_bandwidth;
        if elapsed > PERIOD_MS {
            bw /= elapsed;
            avg = bw;
        } else {
            bw = (bw + old * (PERIOD_MS - elapsed)) / PERIOD_MS;
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
        self.written_stamp = self.written;
        self.bw_time_stamp = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device writing 256 k pages a second (1 GiB/s) from a fresh bdi: the estimate rises
    /// from 100 MiB/s towards it over seconds, and the smoothed one lags behind it.
    #[test]
    fn the_estimate_follows_the_device_slowly_from_init_bw() {
        let mut wb = BdiWriteback::default();
        let ms = 1_000_000;
        wb.estimate_start(2000 * ms);
        let mut seen = Vec::new();
        for step in 1..=20u64 {
            let now = 2000 * ms + step * 200 * ms;
            wb.written += 256 * 1024 / 5;
            wb.update_if_due(now);
            seen.push((wb.write_bandwidth, wb.avg_write_bandwidth));
        }
        let (bw1, avg1) = seen[0];
        assert!(bw1 > INIT_BW && bw1 < 2 * INIT_BW, "one interval moves it by 200/4096: {bw1}");
        assert_eq!(avg1, INIT_BW, "the smoothed one waits until the estimate has moved twice");
        let (bw20, avg20) = seen[19];
        assert!(bw20 > 4 * INIT_BW && bw20 < 256 * 1024, "four seconds in: {bw20}");
        assert!(avg20 > INIT_BW && avg20 < bw20, "smoothed below the estimate: {avg20} vs {bw20}");
        // An update within BANDWIDTH_INTERVAL of the last one changes nothing.
        wb.written += 1000;
        wb.update_if_due(2000 * ms + 4000 * ms + 100 * ms);
        assert_eq!((wb.write_bandwidth, wb.avg_write_bandwidth), (bw20, avg20));
    }
}
