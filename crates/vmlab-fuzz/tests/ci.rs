//! The suite's minute of fuzzing (`scripts/test-all.sh`), as an ignored test so that it runs from
//! the suite's one build, beside the other long tests, instead of building the fuzzer again.
//! A panic, an abort, a stack overflow or an input over its time limit fails it; the input is
//! saved under `fuzz/findings/` to replay (fuzz/README.md).

use std::process::Command;

#[test]
#[ignore = "a minute of wall time: scripts/test-all.sh runs it with the other long tests"]
fn a_minute_of_fuzzing_finds_nothing() {
    let seconds = std::env::var("VMLAB_FUZZ_SECONDS").unwrap_or_else(|_| "60".into());
    let status = Command::new(env!("CARGO_BIN_EXE_vmlab-fuzz"))
        .args(["--seconds", &seconds, "--inputs", "100000000"])
        .status()
        .expect("vmlab-fuzz runs");
    assert!(status.success(), "vmlab-fuzz found a failure ({status}); see its output above and fuzz/findings/");
}
