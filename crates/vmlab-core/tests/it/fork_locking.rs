//! `fork` copies the address space under the parent's mmap_sem held for write, as the kernel's
//! `dup_mmap` does in every era (2.4.27 `copy_mm`: `down_write(&oldmm->mmap_sem)` around
//! `dup_mmap`; 6.x: `mmap_write_lock_killable(oldmm)` and `vma_start_write` on each VMA). So a
//! fork waits while another thread's fault holds mmap_sem, which on the kernels whose faults
//! sleep on I/O holding it (2.6.26 and before) is as long as a disk read.

use vmlab_core::profiles::{self, FaultLocking};
use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

/// One thread faults in a file from a disk at random (each fault a read); the other forks
/// children that exit at once.
const FAULTS_AND_FORKS: &str = r#"name = "fork-locking"
seed = 1
duration = "60s"
[machine]
memory = "256MiB"
cpus = 2
[[disk]]
name = "sda"
[[file]]
name = "data"
size = "64MiB"
[[process]]
name = "p"
program = '''
mmap f file=data
mmap heap anon 4MiB
touch heap write
threads 2 {
    if tid == 0 {
        touch f pattern=uniform count=4000
    } else {
        repeat 20 {
            fork {
                exit
            }
            sleep 20ms
        }
    }
}
'''
"#;

fn run(profile: &str) -> Sim {
    let sc = load_scenario_str("fork-locking.toml", FAULTS_AND_FORKS, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds");
    sim.run().expect("runs");
    sim
}

#[test]
fn a_fork_waits_for_a_fault_holding_mmap_sem() {
    let mut seen = 0;
    for name in profiles::names() {
        let p = profiles::find(name).expect("profile");
        let sim = run(name);
        sim.k.check_rmap().unwrap_or_else(|e| panic!("{name}: {e}"));
        // The parent, its two threads and the twenty children: no fork was lost.
        assert_eq!(sim.s.tasks.iter().filter(|t| t.kind == vmlab_core::sched::TaskKind::User).count(), 23, "{name}");
        let st = sim.k.mmap_sem_stats();
        eprintln!(
            "{name}: mmap_sem write_contended {} write_wait {:.1} ms, io waits holding {}",
            st.write_contended,
            st.write_wait_ns as f64 / 1e6,
            st.io_waits_holding
        );
        if p.fault_locking == FaultLocking::HoldAcrossIo {
            seen += 1;
            assert!(st.io_waits_holding > 0, "{name}: faults slept on I/O holding mmap_sem");
            // Nothing else here takes mmap_sem for write: only forks can have waited for it.
            assert!(st.write_contended > 0, "{name}: no fork waited for mmap_sem");
            assert!(st.write_wait_ns > 0, "{name}");
        }
    }
    assert!(seen > 0, "some profile's faults hold mmap_sem across I/O");
}

/// What a kill does to a thread queued on mmap_sem, by the profile's `mmap_sem_killable`: 6.x's
/// killable waits take it off the queue at once; 2.4's and 2.6's `down_write`/`down_read` sleep
/// TASK_UNINTERRUPTIBLE, so the thread stays queued, dead to its program, and exits only when
/// the lock is granted. Each row whose faults hold mmap_sem across I/O (so a fork queues behind
/// them) runs both ways, the field flipped; the first waiter seen at a 1-ms sample is killed.
#[test]
fn a_killed_mmap_sem_waiter_leaves_the_queue_only_if_killable() {
    use std::cell::RefCell;
    use std::rc::Rc;
    use vmlab_core::sched::TState;
    let mut seen = 0;
    for name in profiles::names() {
        let p = profiles::find(name).expect("profile");
        if p.fault_locking != FaultLocking::HoldAcrossIo {
            continue;
        }
        for killable in [false, true] {
            let sc = load_scenario_str(
                "fork-locking.toml",
                FAULTS_AND_FORKS,
                &["duration=2s".to_string(), "interval=1ms".to_string()],
            )
            .expect("loads");
            let mut prof = resolve_profile(&sc, Some(name)).expect("profile");
            prof.mmap_sem_killable = killable;
            let mut sim = Sim::new(&sc, prof).expect("builds");
            // (victim, still queued right after the kill, exited right after the kill)
            let got: Rc<RefCell<Option<(usize, bool, bool)>>> = Rc::default();
            let g = Rc::clone(&got);
            sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
                if g.borrow().is_some() {
                    return;
                }
                let queued = sim.s.tasks.iter().enumerate().find_map(|(t, task)| {
                    let mm = task.mm?;
                    sim.k.mms[mm as usize].as_ref()?.mmap_sem.is_waiting(t).then_some((t, mm))
                });
                if let Some((t, mm)) = queued {
                    vmlab_core::syscalls::kill_task(sim, t);
                    let still = sim.k.mms[mm as usize].as_ref().is_some_and(|m| m.mmap_sem.is_waiting(t));
                    *g.borrow_mut() = Some((t, still, sim.s.tasks[t].state == TState::Exited));
                }
            }));
            sim.run().expect("runs");
            let (t, still, exited) = got.borrow().expect("a thread queued on mmap_sem");
            assert_eq!(still, !killable, "{name} killable={killable}: queued after the kill");
            assert_eq!(exited, killable, "{name} killable={killable}: exited at the kill");
            assert_eq!(sim.s.tasks[t].state, TState::Exited, "{name} killable={killable}: it exits in the end");
            sim.k.check_rmap().unwrap_or_else(|e| panic!("{name}: {e}"));
            // The dead thread neither holds the lock nor waits for it (the faulting thread may
            // still hold it for read across a disk read when the run stops).
            for m in sim.k.mms.iter().flatten() {
                let s = &m.mmap_sem;
                assert!(s.writer != Some(t) && !s.is_waiting(t), "{name} killable={killable}: {s:?}");
            }
        }
        seen += 1;
    }
    assert!(seen > 0, "some profile's faults hold mmap_sem across I/O");
}
