//! What `vmlab real` checks before it touches the host: that the scenario only uses what the real
//! executor can do, that it runs as root, and that a memory cgroup controller is mounted. Every
//! refusal is one line and leaves nothing behind.

use std::path::PathBuf;

use vmlab_core::workload::ast::{Backing, OpKind, Stmt};
use vmlab_core::workload::{Scenario, ScenarioError};

/// The cgroup hierarchies `vmlab real` knows how to drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgVersion {
    /// cgroup v1: a `memory` hierarchy with `memory.limit_in_bytes`, `tasks`, `memory.stat`.
    V1,
    /// cgroup v2 (unified): `memory.max`, `memory.current`, `cgroup.procs`.
    V2,
}

impl CgVersion {
    pub fn name(self) -> &'static str {
        match self {
            CgVersion::V1 => "v1",
            CgVersion::V2 => "v2",
        }
    }
}

/// Tests point this at an empty directory to see the "no memory cgroup" refusal.
pub const CGROUP_ROOT_ENV: &str = "VMLAB_REAL_CGROUP_ROOT";
/// Tests set this to see the "needs root" refusal while running as root.
pub const PRETEND_USER_ENV: &str = "VMLAB_REAL_PRETEND_NONROOT";

pub fn check_root() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 || std::env::var_os(PRETEND_USER_ENV).is_some() {
        return Err(format!(
            "vmlab real: needs root (it creates a memory cgroup, and a swap file for a scenario with [swap]); running as uid {euid}{}",
            if euid == 0 { " pretending not to be root" } else { "" }
        ));
    }
    Ok(())
}

/// The directory under which a child memory cgroup can be made, and its version.
pub fn find_memory_cgroup() -> Result<(CgVersion, PathBuf), String> {
    let root = std::env::var_os(CGROUP_ROOT_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/sys/fs/cgroup"));
    let v1 = root.join("memory");
    if v1.join("memory.limit_in_bytes").is_file() && v1.join("tasks").is_file() {
        return Ok((CgVersion::V1, v1));
    }
    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "memory") {
        return Ok((CgVersion::V2, root));
    }
    Err(format!(
        "vmlab real: no memory cgroup controller under {} (need cgroup v1 {}/memory or cgroup v2 with `memory` in cgroup.controllers)",
        root.display(),
        root.display()
    ))
}

/// The first thing in the scenario the real executor cannot do, as an error pointing at it.
pub fn check_scenario(sc: &Scenario) -> Result<(), ScenarioError> {
    let f = &sc.file;
    let whole = |what: &str| {
        Err(ScenarioError::new(&sc.path, format!("{what} is not supported by `vmlab real` (use `vmlab run` for it)")))
    };
    if !f.netrx.is_empty() {
        return whole("[[netrx]] (atomic network-receive allocations)");
    }
    if f.slub.is_some() {
        return whole("a [slub] table (the host kernel's boot parameters are not changed)");
    }
    if !f.vm.is_empty() || !f.reclaim.is_empty() {
        // The host's tunables are global: changing them would change the machine for everyone.
        return whole("a [vm] or [reclaim] table (host tunables are not changed)");
    }
    if f.machine.memory.trim().is_empty() {
        return whole("an empty machine.memory");
    }
    for p in &sc.processes {
        check_block(sc, &p.program)?;
    }
    Ok(())
}

fn check_block(sc: &Scenario, body: &[Stmt]) -> Result<(), ScenarioError> {
    for s in body {
        match s {
            Stmt::For { body, .. } | Stmt::Repeat { body, .. } => check_block(sc, body)?,
            Stmt::If { then, els, .. } => {
                check_block(sc, then)?;
                check_block(sc, els)?;
            }
            Stmt::Op(op) => {
                if let Some(what) = unsupported(&op.kind) {
                    return Err(sc.error_at(op.span, format!("`{what}` is not supported by `vmlab real` yet")));
                }
                if let OpKind::Threads { body, .. } | OpKind::ForeachQueue { body, .. } = &op.kind {
                    check_block(sc, body)?;
                }
            }
            Stmt::Let { .. } | Stmt::Assign { .. } | Stmt::Break { .. } => {}
        }
    }
    Ok(())
}

/// The operation's name when the real executor refuses it.
fn unsupported(k: &OpKind) -> Option<&'static str> {
    Some(match k {
        OpKind::Fork { .. } => "fork",
        // CPU numbers of the simulated machine do not name the host's CPUs.
        OpKind::Migrate { .. } => "migrate",
        OpKind::Mmap { backing: Backing::Shm(_), .. } => "mmap shm=",
        // The host's swap and free memory are the whole host's, not the scenario's machine.
        OpKind::WaitUntil { .. } => "wait_until",
        _ => return None,
    })
}
