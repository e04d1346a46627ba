//! Direct reclaim queues writeback work: 2.6.36's `do_try_to_free_pages` calls
//! `wakeup_flusher_threads(total_scanned)`, and 2.6.26's `wakeup_pdflush(total_scanned)` hands
//! pdflush `background_writeout(total_scanned)`: work written even when the dirty pages are under
//! the background threshold and younger than `dirty_expire_centisecs`.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::workload::load_scenario_str;

/// 8 MiB dirtied at once (under 10 % of the dirtyable memory) and never old enough to expire in
/// the run; a reader fills the page cache and an anonymous toucher then allocates faster than
/// kswapd frees, so tasks reclaim directly.
const PRESSURE: &str = r#"name = "flusher-work"
seed = 1
duration = "20s"
[machine]
memory = "256MiB"
cpus = 2
[[disk]]
name = "sda"
bandwidth = "200MB/s"
[[file]]
name = "log"
size = "8MiB"
disk = "sda"
[[file]]
name = "big"
size = "400MiB"
disk = "sda"
[[process]]
name = "writer"
program = '''
write log
sleep forever
'''
[[process]]
name = "reader"
program = '''
read big
sleep forever
'''
[[process]]
name = "hog"
program = '''
sleep 3s
mmap a anon 120MiB
touch a write
sleep forever
'''
"#;

/// Pages the flusher wrote: every page written less those reclaim wrote itself (no swap here).
fn flusher_written(s: &Sim) -> u64 {
    s.k.ev.get(Vm::Pgpgout) / 4 - s.k.ev.get(Vm::NrVmscanWrite)
}

#[test]
fn direct_reclaim_has_the_flusher_write_unexpired_pages_under_the_background_threshold() {
    for profile in ["linux-2.6.26", "linux-2.6.27", "linux-2.6.36", "linux-2.6.38"] {
        let sc = load_scenario_str("flusher-work.toml", PRESSURE, &[]).expect("loads");
        let mut s = Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds");
        s.run().expect("runs");
        assert!(s.k.ev.get(Vm::Allocstall) > 0, "{profile}: no direct reclaim, the test says nothing");
        let (bg, _) = vmlab_core::page_writeback::thresholds(&s.k);
        assert!(2048 < bg, "{profile}: 8 MiB is over the background threshold ({bg} pages)");
        assert!(flusher_written(&s) > 0, "{profile}: the flusher wrote nothing");
    }
}
