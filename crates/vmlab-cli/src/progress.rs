//! Progress on standard error while a long command works, for a person at a terminal: one line,
//! redrawn in place at most ten times a second, erased when the work is done. Nothing is drawn
//! when standard error is not a terminal, so logs and pipes see only the command's own output.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use vmlab_core::reproduce::Progress;

/// Below this much wall time nothing is drawn: a quick command should not flicker.
const QUIET_FOR: Duration = Duration::from_millis(300);
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// The progress line of one command.
pub struct Line {
    start: Instant,
    st: Mutex<State>,
}

#[derive(Default)]
struct State {
    last_draw: Option<Instant>,
    drawn: bool,
    /// Runs announced so far: (k, n, label).
    runs: Vec<(usize, usize, String)>,
}

impl Line {
    /// A progress line if standard error is a terminal.
    pub fn for_terminal() -> Option<Line> {
        std::io::stderr().is_terminal().then(|| Line { start: Instant::now(), st: Mutex::new(State::default()) })
    }

    /// Progress of a single run (`vmlab run`, `explain`).
    pub fn draw_single(&self, now_ns: u64, end_ns: Option<u64>) {
        self.draw(None, now_ns, end_ns)
    }

    fn draw(&self, run: Option<(usize, usize, &str)>, now_ns: u64, end_ns: Option<u64>) {
        let Ok(mut st) = self.st.lock() else { return };
        let t = Instant::now();
        let waited = t.duration_since(self.start);
        if waited < QUIET_FOR || st.last_draw.is_some_and(|l| t.duration_since(l) < REDRAW_EVERY) {
            return;
        }
        st.last_draw = Some(t);
        st.drawn = true;
        let text = line(run, now_ns, end_ns, waited.as_secs_f64());
        let width = term_width().saturating_sub(1).max(20);
        let shown: String = text.chars().take(width).collect();
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[K{shown}");
        let _ = e.flush();
    }

    /// Erase the line, if one was drawn.
    pub fn clear(&self) {
        if self.st.lock().is_ok_and(|s| s.drawn) {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[K");
            let _ = e.flush();
        }
    }
}

impl Progress for Line {
    fn run_start(&self, k: usize, n: usize, profile: &str, sets: &[String]) {
        let label = if sets.is_empty() { profile.to_string() } else { format!("{profile} {}", sets.join(" ")) };
        if let Ok(mut st) = self.st.lock() {
            st.runs.push((k, n, label));
        }
    }

    fn tick(&self, k: usize, now_ns: u64, end_ns: Option<u64>) {
        let run = self.st.lock().ok().and_then(|st| st.runs.iter().find(|r| r.0 == k).cloned());
        if let Some((k, n, label)) = run {
            self.draw(Some((k, n, &label)), now_ns, end_ns);
        }
    }
}

/// Progress as plain lines, for standard error that is a file or a pipe: one line per run each
/// time it passes another tenth of its simulated length (runs without a duration: none).
pub struct Log {
    start: Instant,
    /// Runs announced so far: (k, n, label, tenths reported).
    runs: Mutex<Vec<(usize, usize, String, u64)>>,
}

impl Default for Log {
    fn default() -> Log {
        Log { start: Instant::now(), runs: Mutex::new(Vec::new()) }
    }
}

impl Progress for Log {
    fn run_start(&self, k: usize, n: usize, profile: &str, sets: &[String]) {
        let label = if sets.is_empty() { profile.to_string() } else { format!("{profile} {}", sets.join(" ")) };
        if let Ok(mut runs) = self.runs.lock() {
            runs.push((k, n, label, 0));
        }
    }

    fn tick(&self, k: usize, now_ns: u64, end_ns: Option<u64>) {
        let Some(end) = end_ns.filter(|&e| e > 0) else { return };
        let tenths = (now_ns.min(end) as u128 * 10 / end as u128) as u64;
        let Ok(mut runs) = self.runs.lock() else { return };
        let Some(r) = runs.iter_mut().find(|r| r.0 == k) else { return };
        if tenths <= r.3 {
            return;
        }
        r.3 = tenths;
        let text = line(Some((r.0, r.1, &r.2)), now_ns, end_ns, self.start.elapsed().as_secs_f64());
        // No ETA: `line`'s counts the runs before this one as done, which parallel runs are not.
        let text = text.split("  ETA").next().unwrap_or(&text);
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "vmlab: {text}");
    }
}

/// The text of the line: `run k/N label  simulated S s [of D s, P%]  wall W  ETA E`. The ETA is
/// the wall time so far scaled by the fraction done (runs finished plus this run's share of its
/// duration, when it has one); none is shown before there is a fraction to scale by.
pub fn line(run: Option<(usize, usize, &str)>, now_ns: u64, end_ns: Option<u64>, wall_s: f64) -> String {
    let now = now_ns as f64 / 1e9;
    let in_run = end_ns.filter(|&e| e > 0).map(|e| (now_ns as f64 / e as f64).min(1.0));
    let mut s = String::new();
    let done = match run {
        Some((k, n, label)) => {
            s.push_str(&format!("run {k}/{n} {label}  "));
            let n = n.max(1) as f64;
            ((k.saturating_sub(1)) as f64 + in_run.unwrap_or(0.0)) / n
        }
        None => in_run.unwrap_or(0.0),
    };
    s.push_str(&format!("simulated {now:.1} s"));
    if let (Some(f), Some(e)) = (in_run, end_ns) {
        s.push_str(&format!(" of {:.0} s ({:.0}%)", e as f64 / 1e9, f * 100.0));
    }
    s.push_str(&format!("  wall {}", clock(wall_s)));
    if done > 0.0 {
        s.push_str(&format!("  ETA {}", clock(wall_s * (1.0 - done) / done)));
    }
    s
}

fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

fn term_width() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ only fills the winsize it is given.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(2, libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0 {
            return ws.ws_col as usize;
        }
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_a_reproduction_shows_k_of_n_and_an_eta() {
        // Run 3 of 4 halfway through its 10 s: 2.5 of 4 done after 5 s of wall time.
        let l = line(Some((3, 4, "linux-6.8 vars.threads=4")), 5_000_000_000, Some(10_000_000_000), 5.0);
        assert_eq!(l, "run 3/4 linux-6.8 vars.threads=4  simulated 5.0 s of 10 s (50%)  wall 0:05  ETA 0:03");
    }

    #[test]
    fn a_run_without_a_duration_shows_no_percent() {
        let l = line(None, 7_300_000_000, None, 61.0);
        assert_eq!(l, "simulated 7.3 s  wall 1:01");
    }
}
