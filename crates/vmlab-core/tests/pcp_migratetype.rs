//! Per-CPU page lists per migrate type (2.6.24+ `pcp->lists[]`, `Profile::pcp_migratetype_lists`):
//! a page freed from a movable pageblock stays on the movable list, so an unmovable order-0
//! allocation on the same CPU refills from the unmovable buddy lists instead of taking it.
use vmlab_core::kernel::{Ctx, Kernel};
use vmlab_core::machine::MachineConfig;
use vmlab_core::page_alloc::Gfp;

fn kernel(profile: &str) -> Kernel {
    let mib = 256u64;
    let zones = MachineConfig::layout(mib << 20, 1, "x86_64").expect("layout");
    let cfg = MachineConfig { memory_bytes: mib << 20, cpus: 2, nodes: 1, arch: "x86_64".into(), cpu_mhz: 3000, reserved_bytes: 0, reserved_low_bytes: 0, zones };
    Kernel::new(vmlab_core::profiles::find(profile).expect("profile"), cfg, 1).expect("kernel")
}

/// Free a movable page, then allocate an unmovable one on the same CPU: is it the same page?
fn unmovable_reuses_movable_page(profile: &str) -> bool {
    let mut k = kernel(profile);
    let mut ctx = Ctx { cpu: 0, ..Default::default() };
    let p = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("movable page");
    k.free_pages(&mut ctx, p, 0);
    let q = k.alloc_pages(&mut ctx, Gfp::kernel(), 0).expect("unmovable page");
    let same = p == q;
    k.free_pages(&mut ctx, q, 0);
    same
}

#[test]
fn pcp_lists_keep_migrate_types_apart() {
    assert!(vmlab_core::profiles::find("linux-2.6.36").expect("profile").pcp_migratetype_lists);
    assert!(!unmovable_reuses_movable_page("linux-2.6.36"));
    // One list per CPU and zone: the hot page just freed is handed out whatever its type.
    assert!(!vmlab_core::profiles::find("linux-6.8").expect("profile").pcp_migratetype_lists);
    assert!(unmovable_reuses_movable_page("linux-6.8"));
}
