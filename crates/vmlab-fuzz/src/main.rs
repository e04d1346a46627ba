//! `vmlab-fuzz`: mutate the kept corpus (fuzz/corpus) and feed every input to the loader, the
//! program compiler and a short simulation, in a worker process that the supervisor restarts
//! when it dies. A panic, an abort, a stack overflow, or an input that takes longer than the
//! time limit is a failure, saved under the findings directory to replay. See fuzz/README.md.
//!
//! Input `i` of a run is a function of the seed and `i` alone, so a finding is replayed by
//! number (`--print I`, `--one I`) as well as from its saved file.

mod mutate;
mod target;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use mutate::Corpus;

const USAGE: &str = "usage: vmlab-fuzz [--corpus DIR] [--seed N] [--inputs N] [--seconds S] [--timeout S]
                  [--findings DIR] [--memory-mib N]
       vmlab-fuzz --print I [--seed N]     show input I
       vmlab-fuzz --one I [--seed N]       run input I in this process
       vmlab-fuzz --replay FILE [--set KEY=VALUE]...
--simulate-every N: simulate every Nth input that loads and is small enough (default 8; the
others stop after the loader and the compiler, which is where most findings are).";

struct Opts {
    corpus: PathBuf,
    seed: u64,
    inputs: u64,
    seconds: Option<f64>,
    timeout: f64,
    findings: PathBuf,
    memory_mib: u64,
    simulate_every: u64,
    worker: Option<(u64, u64)>,
    print: Option<u64>,
    one: Option<u64>,
    replay: Option<PathBuf>,
    sets: Vec<String>,
}

fn parse_args() -> Result<Opts, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut o = Opts {
        corpus: root.join("corpus"),
        seed: 1,
        inputs: 10_000,
        seconds: None,
        timeout: 20.0,
        findings: root.join("findings"),
        memory_mib: 4096,
        simulate_every: 8,
        worker: None,
        print: None,
        one: None,
        replay: None,
        sets: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{a} {v}: {e}"));
        match a.as_str() {
            "--corpus" => o.corpus = val()?.into(),
            "--findings" => o.findings = val()?.into(),
            "--seed" => o.seed = num(val()?)?,
            "--inputs" => o.inputs = num(val()?)?,
            "--memory-mib" => o.memory_mib = num(val()?)?,
            "--simulate-every" => o.simulate_every = num(val()?)?.max(1),
            "--seconds" => o.seconds = Some(val()?.parse().map_err(|e| format!("--seconds: {e}"))?),
            "--timeout" => o.timeout = val()?.parse().map_err(|e| format!("--timeout: {e}"))?,
            "--print" => o.print = Some(num(val()?)?),
            "--one" => o.one = Some(num(val()?)?),
            "--replay" => o.replay = Some(val()?.into()),
            "--set" => o.sets.push(val()?),
            "--worker" => {
                let (from, to) = (num(val()?)?, num(val()?)?);
                o.worker = Some((from, to));
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    Ok(o)
}

fn load_corpus(dir: &Path) -> Result<Corpus, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    let inputs: Vec<String> = names.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    if inputs.is_empty() {
        return Err(format!("{}: no .toml scenarios", dir.display()));
    }
    let sets = std::fs::read_to_string(dir.join("sets.txt"))
        .map(|s| s.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    Ok(Corpus::new(inputs, sets))
}

fn input(corpus: &Corpus, seed: u64, i: u64) -> (Vec<u8>, Vec<String>) {
    let mut rng = Pcg64Mcg::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
    corpus.generate(&mut rng)
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(f) = &o.replay {
        let text = match std::fs::read(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{}: {e}", f.display());
                return ExitCode::from(2);
            }
        };
        let sets = if o.sets.is_empty() { saved_sets(f) } else { o.sets.clone() };
        println!("{:?}", target::run_one(&text, &sets, &scratch(), true));
        return ExitCode::SUCCESS;
    }
    let corpus = match load_corpus(&o.corpus) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vmlab-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(i) = o.print {
        let (text, sets) = input(&corpus, o.seed, i);
        println!("{}", String::from_utf8_lossy(&text));
        for s in sets {
            println!("--set {s:?}");
        }
        return ExitCode::SUCCESS;
    }
    if let Some(i) = o.one {
        let (text, sets) = input(&corpus, o.seed, i);
        println!("{:?}", target::run_one(&text, &sets, &scratch(), true));
        return ExitCode::SUCCESS;
    }
    match o.worker {
        Some((from, to)) => worker(&corpus, o.seed, from, to, o.memory_mib, o.simulate_every),
        None => supervise(&o, &corpus),
    }
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("vmlab-fuzz-{}.toml", std::process::id()))
}

/// The `--set`s saved beside a finding (FILE.sets, one a line).
fn saved_sets(f: &Path) -> Vec<String> {
    std::fs::read_to_string(f.with_extension("sets"))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Inputs `from..to`, each announced on stdout before it runs (`> I`), its outcome after
/// (`< I KIND [message]`); a panic is caught and reported (`! I message`), and the run goes on.
fn worker(corpus: &Corpus, seed: u64, from: u64, to: u64, memory_mib: u64, simulate_every: u64) -> ExitCode {
    limit_memory(memory_mib);
    std::panic::set_hook(Box::new(|_| {}));
    let scratch = scratch();
    let mut out = std::io::stdout().lock();
    for i in from..to {
        let (text, sets) = input(corpus, seed, i);
        if writeln!(out, "> {i}").and_then(|_| out.flush()).is_err() {
            break;
        }
        let r = std::panic::catch_unwind(|| target::run_one(&text, &sets, &scratch, i % simulate_every == 0));
        let line = match r {
            Ok((k, None)) => format!("< {i} {k:?}"),
            Ok((k, Some(m))) => format!("< {i} {k:?} {}", one_line(&m)),
            Err(p) => {
                let m = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                format!("! {i} {}", one_line(&m))
            }
        };
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    let _ = std::fs::remove_file(&scratch);
    ExitCode::SUCCESS
}

fn one_line(m: &str) -> String {
    let m: String = m.chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect();
    // Numbers vary between inputs; the summary groups messages by their words.
    m.split_whitespace()
        .map(|w| if w.chars().any(|c| c.is_ascii_digit()) { "N" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// An address-space cap on the worker, so that a runaway allocation aborts it (a finding)
/// instead of taking the host's memory.
fn limit_memory(mib: u64) {
    #[cfg(unix)]
    {
        let bytes = mib.saturating_mul(1 << 20) as libc::rlim_t;
        let lim = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
        // SAFETY: setrlimit reads the struct it is given; no other thread exists yet.
        unsafe {
            libc::setrlimit(libc::RLIMIT_AS, &lim);
        }
    }
}

#[derive(Default)]
struct Tally {
    done: u64,
    kinds: BTreeMap<String, u64>,
    unpositioned: BTreeMap<String, u64>,
    failures: Vec<String>,
}

fn supervise(o: &Opts, corpus: &Corpus) -> ExitCode {
    let start = Instant::now();
    let deadline = o.seconds.map(|s| start + Duration::from_secs_f64(s));
    let exe = std::env::current_exe().expect("own path");
    let mut t = Tally::default();
    let mut next = 0u64;
    let mut last_report = Instant::now();
    'restart: while next < o.inputs && deadline.is_none_or(|d| Instant::now() < d) {
        let mut child = Command::new(&exe)
            .args(["--corpus", &o.corpus.to_string_lossy(), "--seed", &o.seed.to_string()])
            .args(["--memory-mib", &o.memory_mib.to_string(), "--simulate-every", &o.simulate_every.to_string()])
            .args(["--worker", &next.to_string(), &o.inputs.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a worker");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let errs = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s);
            s
        });
        let mut current: Option<u64> = None;
        loop {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let _ = child.kill();
                let _ = child.wait();
                break 'restart;
            }
            match rx.recv_timeout(Duration::from_secs_f64(o.timeout)) {
                Ok(l) => {
                    let (tag, rest) = l.split_at(1);
                    let mut parts = rest.trim_start().splitn(3, ' ');
                    let i: u64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                    match tag {
                        ">" => current = Some(i),
                        "<" => {
                            let kind = parts.next().unwrap_or("?").to_string();
                            if let Some(m) = parts.next() {
                                *t.unpositioned.entry(format!("{kind}: {m}")).or_default() += 1;
                            }
                            *t.kinds.entry(kind).or_default() += 1;
                            t.done += 1;
                            next = i + 1;
                            current = None;
                        }
                        _ => {
                            let m = rest.trim_start().split_once(' ').map_or("", |x| x.1);
                            finding(o, corpus, &mut t, i, &format!("panic: {m}"));
                            next = i + 1;
                            current = None;
                        }
                    }
                    if last_report.elapsed() > Duration::from_secs(60) {
                        last_report = Instant::now();
                        eprintln!(
                            "vmlab-fuzz: {} inputs, {:.0}/s, {} failures",
                            t.done,
                            rate(&t, start),
                            t.failures.len()
                        );
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let i = current.unwrap_or(next);
                    finding(o, corpus, &mut t, i, &format!("hang: no result in {} s", o.timeout));
                    next = i + 1;
                    continue 'restart;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = child.wait().expect("wait for the worker");
                    let err = errs.join().unwrap_or_default();
                    match current {
                        // The worker died inside an input: an abort, a stack overflow, a signal.
                        Some(i) => {
                            let last = err.lines().last().unwrap_or("").to_string();
                            finding(o, corpus, &mut t, i, &format!("crash ({status}): {last}"));
                            next = i + 1;
                        }
                        None if status.success() => next = next.max(o.inputs),
                        None => {
                            eprintln!("vmlab-fuzz: the worker failed between inputs ({status}): {err}");
                            return ExitCode::from(2);
                        }
                    }
                    continue 'restart;
                }
            }
        }
    }
    summary(o, &t, start)
}

fn rate(t: &Tally, start: Instant) -> f64 {
    t.done as f64 / start.elapsed().as_secs_f64().max(1e-9)
}

fn finding(o: &Opts, corpus: &Corpus, t: &mut Tally, i: u64, what: &str) {
    t.done += 1;
    let (text, sets) = input(corpus, o.seed, i);
    let _ = std::fs::create_dir_all(&o.findings);
    let base = o.findings.join(format!("seed{}-input{i}", o.seed));
    let _ = std::fs::write(base.with_extension("toml"), &text);
    let _ = std::fs::write(base.with_extension("sets"), sets.join("\n"));
    let line = format!("input {i}: {what} (saved as {})", base.with_extension("toml").display());
    eprintln!("vmlab-fuzz: {line}");
    t.failures.push(line);
}

fn summary(o: &Opts, t: &Tally, start: Instant) -> ExitCode {
    println!(
        "vmlab-fuzz: seed {}, simulating every {}th, {} inputs in {:.0} s ({:.0}/s), {} failures",
        o.seed,
        o.simulate_every,
        t.done,
        start.elapsed().as_secs_f64(),
        rate(t, start),
        t.failures.len()
    );
    for (k, n) in &t.kinds {
        println!("  {k:>20} {n}");
    }
    if !t.unpositioned.is_empty() {
        println!("errors without a position, by message (numbers as N):");
        let mut v: Vec<_> = t.unpositioned.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        for (m, n) in v.iter().take(40) {
            println!("  {n:>8}  {m}");
        }
    }
    for f in &t.failures {
        println!("FAIL {f}");
    }
    if t.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
