//! What the CLI's integration tests share: the built `vmlab`, its finished run as text, and
//! scratch files under cargo's `target/tmp` (not the shared /tmp).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `vmlab` this test binary was built with; each test adds its directory, environment and pipes.
pub fn vmlab_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vmlab"))
}

/// (exit status, stdout, stderr) of a finished run; the status is -1 when a signal ended it.
pub fn status_and_text(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `target/tmp/PREFIX-PID`, made if missing: one per test process, so parallel runs do not meet.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tmp dir");
    d
}

/// Write `text` to `dir/name`; the path as a command line takes it.
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write scenario");
    p.to_string_lossy().into_owned()
}
