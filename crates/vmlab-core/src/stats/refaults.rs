//! `vmlab run --refaults FILE`: every refault's test, one line each, as
//! `workingset_test_recent` made it — for reading where in a workload's passes refaults stop
//! being activated (the host has no tracepoint for it, and its `memory.stat` only counts).
//! An observer of `Tracepoint::WorkingsetRefault`; attaching it never changes a run.

use std::any::Any;
use std::io::Write;

use crate::kernel::Kernel;
use crate::trace::{kind, Tracepoint, Tracer};

/// The first line of the file: the columns, in pages but the time (simulated seconds). The
/// lists are the evicting lruvec's as the test read them (with groups, as last flushed).
pub const HEADER: &str =
    "# t_s file nr distance workingset activated restored inactive_anon active_anon inactive_file active_file\n";

pub struct RefaultLog {
    out: Box<dyn Write>,
    pub error: Option<std::io::Error>,
}

impl RefaultLog {
    pub fn new(mut out: Box<dyn Write>) -> RefaultLog {
        let error = out.write_all(HEADER.as_bytes()).err();
        RefaultLog { out, error }
    }

    pub fn create(file: &std::path::Path) -> Result<RefaultLog, String> {
        let out = std::fs::File::create(file).map_err(|e| format!("--refaults {}: {e}", file.display()))?;
        Ok(RefaultLog::new(Box::new(std::io::BufWriter::new(out))))
    }
}

impl Tracer for RefaultLog {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let Tracepoint::WorkingsetRefault { file, nr, distance, workingset_size, activated, restored, lists } = *ev
        else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let [ia, aa, inf, af] = lists;
        let (f, a, r) = (file as u8, activated as u8, restored as u8);
        let t = k.now as f64 / 1e9;
        let line = format!("{t:.6} {f} {nr} {distance} {workingset_size} {a} {r} {ia} {aa} {inf} {af}\n");
        self.error = self.out.write_all(line.as_bytes()).err();
    }
    fn wants(&self) -> u32 {
        kind::WORKINGSET_REFAULT
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn finish(&mut self) {
        if self.error.is_none() {
            self.error = self.out.flush().err();
        }
    }
}
