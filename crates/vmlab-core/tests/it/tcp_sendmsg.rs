//! `send`: `tcp_sendmsg` queues a write on order-0 unmovable pages that stay pinned until the
//! client acknowledges them, at most `sndbuf` bytes at a time.

use vmlab_core::stats::report::RunReport;
use vmlab_core::workload::load_scenario_str;

const SENDER: &str = r#"name = "sender"
seed = 1
profile = "linux-2.6.36"
[machine]
memory = "256MiB"
cpus = 2
[vars]
rate = "64KiB"
sndbuf = "256KiB"
[[process]]
name = "server"
program = '''
send 1MiB rate=rate sndbuf=sndbuf
mark sent
sleep 60s
'''
"#;

fn run(sets: &[&str]) -> Result<(RunReport, vmlab_core::sim::Sim), String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("sender.toml", SENDER, &sets).expect("loads");
    vmlab_core::api::run(&sc, vmlab_core::api::RunOpts::default()).map_err(vmlab_core::api::render)
}

fn pinned(sets: &[&str]) -> u64 {
    run(sets).expect("runs").1.k.g.sock
}

#[test]
fn a_slow_client_keeps_the_send_buffer_pinned() {
    // 1 MiB to a 64 KiB/s client takes 16 s: at 8 s the queue is full (256 KiB = 64 pages,
    // less what the client took since the last page was queued).
    let full = pinned(&["duration=8s"]);
    assert!((62..=64).contains(&full), "{full} pages queued");
    let half = pinned(&["duration=8s", "vars.sndbuf=128KiB"]);
    assert!((30..=32).contains(&half), "{half} pages queued with a 128 KiB buffer");
    // The pages are in no LRU, slab or free list: SysRq-M's unaccounted remainder.
    let (_, sim) = run(&["duration=8s"]).unwrap();
    let normal = sim.k.zones.iter().position(|z| z.kind == vmlab_core::mmzone::ZoneType::Normal);
    let zid = normal.unwrap_or(sim.k.zones.len() - 1);
    let other = vmlab_core::reproduce::kswapd_high_order::zone_composition(&sim, zid)[5];
    let zone_pages = (sim.k.zones[zid].end_pfn - sim.k.zones[zid].start_pfn) as f64;
    assert!(other * zone_pages / 100.0 >= full as f64 * 0.5, "{other:.3} % other in the zone");
}

#[test]
fn acknowledged_pages_are_freed_and_the_write_waits_for_room() {
    let (r, sim) = run(&["duration=30s"]).expect("runs");
    assert_eq!(sim.k.g.sock, 0, "everything acknowledged after 16 s");
    assert_eq!(sim.k.tcp.pages_sent, 256);
    // The write returns once its last page is queued: (1 MiB - 256 KiB) / 64 KiB/s = 12 s.
    let sent = r.metrics.get("sent").copied().unwrap_or(f64::NAN);
    assert!((11.8..=12.3).contains(&sent), "write returned at {sent:.2} s");
    // A faster client: 4 s.
    let (r, _) = run(&["duration=30s", "vars.rate=192KiB"]).expect("runs");
    let sent = r.metrics.get("sent").copied().unwrap_or(f64::NAN);
    assert!((3.8..=4.3).contains(&sent), "write returned at {sent:.2} s with a 192 KiB/s client");
}

#[test]
fn a_zero_rate_is_a_positioned_error() {
    let e = run(&["vars.rate=0"]).err().expect("refused");
    assert!(e.contains("`send` needs a positive `rate=`"), "{e}");
    assert!(e.contains("sender.toml:13:1"), "{e}");
}
