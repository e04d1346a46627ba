//! Mutations of scenarios, aware of their two grammars: TOML tables (a section is a header line
//! and what follows it) and the program language (tokens, and `{ … }` blocks as subtrees), plus
//! byte-level damage and `--set` strings. Material for splices comes from the whole corpus.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// Values chosen because loaders get them wrong: bounds of the integer types, empty and huge
/// sizes, odd units, TOML types a field does not expect (datetimes, arrays, inline tables).
const INTERESTING: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4096",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "99999999999999999999",
    "1e400",
    "nan",
    "inf",
    "-0",
    "0.5",
    "1.5",
    "\"\"",
    "\"0B\"",
    "\"1B\"",
    "\"4K\"",
    "\"1TiB\"",
    "\"1024TiB\"",
    "\"16EiB\"",
    "\"1ms\"",
    "\"0s\"",
    "\"1h\"",
    "\"1y\"",
    "\"-1s\"",
    "\"1.5s\"",
    "\"100GB/s\"",
    "\"0MB/s\"",
    "true",
    "false",
    "[]",
    "[1, 2]",
    "{}",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "'''",
    "\"\\u0000\"",
    "10^12",
    "0..10",
    "1000000000000",
    "{",
    "}",
    "(",
    ")",
    "loop",
    "break",
    "exit",
    "wait",
    "fork",
    "threads",
    "repeat",
    "for",
    "in",
    "if",
    "else",
    "let",
    "x",
    "i",
    "tid",
    "errno",
    "nr_cpus",
    "nr_nodes",
    "min(",
    "max(",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "!",
    "==",
    "<",
    ">=",
    "=",
    "+=",
    "-=",
    ";",
    "\n",
    "#",
    "..",
    "{i}",
    "r{",
    "anon",
    "file=",
    "shm=",
    "fixed",
    "shared",
    "private",
    "locked",
    "populate",
    "offset=",
    "len=",
    "chunk=",
    "stride=",
    "count=",
    "rate=",
    "pattern=zipf",
    "theta=",
    "bs=",
    "append",
    "size=",
    "disk=",
    "queue",
    "sleep",
    "forever",
    "compute",
    "mark",
    "mmap",
    "munmap",
    "mlock",
    "munlock",
    "madvise",
    "dontneed",
    "touch",
    "read",
    "write",
    "create",
    "unlink",
    "fsync",
    "send",
    "sndbuf=",
    "migrate",
    "drop_caches",
    "swapoff",
    "foreach",
    "é",
    "\u{feff}",
    "\t",
    "\r\n",
];

const SET_KEYS: &[&str] = &[
    "machine.memory",
    "machine.cpus",
    "machine.nodes",
    "machine.zones",
    "machine.arch",
    "machine.reserved",
    "vm.swappiness",
    "vm.min_free_kbytes",
    "vm.dirty_ratio",
    "vm.bogus",
    "reclaim.objrmap_walk",
    "reclaim.bogus",
    "seed",
    "duration",
    "interval",
    "linger",
    "profile",
    "name",
    "swap.size",
    "swap.disk",
    "file.0.size",
    "file.0.count",
    "file.9.size",
    "process.0.count",
    "process.0.program",
    "process.0.start",
    "process.1.name",
    "process.worker.count",
    "process.nosuch.count",
    "disk.sda.bandwidth",
    "disk.sda.write_bandwidth",
    "disk.sda.scheduler",
    "disk.sda.writes_starved",
    "disk.sda.io_end_pages",
    "disk.sda.loop_worker",
    "disk.sda.model",
    "disk.0.queue_depth",
    "vars.n",
    "vars.chunk",
    "vars.nosuch",
    "netrx.0.rate",
    "filetree.0.mean",
    "fs.inode",
    "",
    ".",
    "a..b",
    "x.",
    "process.-1.count",
    "process.99999999999999999999.count",
];

/// The corpus, and every token of it, for splices.
pub struct Corpus {
    pub inputs: Vec<String>,
    pub sets: Vec<String>,
    tokens: Vec<String>,
    lines: Vec<String>,
    blocks: Vec<String>,
}

impl Corpus {
    pub fn new(inputs: Vec<String>, sets: Vec<String>) -> Corpus {
        let mut tokens = Vec::new();
        let mut lines = Vec::new();
        let mut blocks = Vec::new();
        for i in &inputs {
            let t = tokenize(i);
            for r in block_ranges(&t) {
                blocks.push(t[r].concat());
            }
            tokens.extend(t.into_iter().filter(|s| !s.trim().is_empty()).map(str::to_string));
            lines.extend(i.lines().map(str::to_string));
        }
        tokens.sort();
        tokens.dedup();
        Corpus { inputs, sets, tokens, lines, blocks }
    }

    /// A scenario and its `--set`s: a corpus entry after one to eight mutations.
    pub fn generate(&self, rng: &mut Pcg64Mcg) -> (Vec<u8>, Vec<String>) {
        let mut text = self.inputs.choose(rng).expect("a corpus").clone();
        let n = 1 + rng.gen_range(0..8usize).min(rng.gen_range(0..8usize));
        let mut bytes = None;
        for _ in 0..n {
            match rng.gen_range(0..100) {
                0..=29 => text = self.token_mutation(&text, rng),
                30..=49 => text = self.block_mutation(&text, rng),
                50..=64 => text = self.line_mutation(&text, rng),
                65..=79 => text = self.value_mutation(&text, rng),
                _ => text = self.section_mutation(&text, rng),
            }
        }
        if rng.gen_ratio(1, 12) {
            bytes = Some(byte_mutation(text.as_bytes(), rng));
        }
        let mut sets = Vec::new();
        if rng.gen_ratio(1, 3) {
            for _ in 0..rng.gen_range(1..4) {
                sets.push(self.set_string(rng));
            }
        }
        (bytes.unwrap_or_else(|| text.into_bytes()), sets)
    }

    fn any_token<'a>(&'a self, rng: &mut Pcg64Mcg) -> &'a str {
        if rng.gen_bool(0.5) {
            INTERESTING.choose(rng).expect("values")
        } else {
            self.tokens.choose(rng).map_or("x", |s| s.as_str())
        }
    }

    /// Replace, delete, duplicate or insert a token, or move a run of tokens elsewhere.
    fn token_mutation(&self, text: &str, rng: &mut Pcg64Mcg) -> String {
        let mut t: Vec<String> = tokenize(text).into_iter().map(str::to_string).collect();
        if t.is_empty() {
            return self.any_token(rng).to_string();
        }
        let i = rng.gen_range(0..t.len());
        match rng.gen_range(0..5) {
            0 => t[i] = self.any_token(rng).to_string(),
            1 => {
                t.remove(i);
            }
            2 => {
                let tok = t[i].clone();
                for _ in 0..rng.gen_range(1..4) {
                    t.insert(i, tok.clone());
                }
            }
            3 => t.insert(i, self.any_token(rng).to_string()),
            _ => {
                let j = (i + rng.gen_range(1..16)).min(t.len());
                let run: Vec<String> = t[i..j].to_vec();
                let at = rng.gen_range(0..=t.len());
                t.splice(at..at, run);
            }
        }
        t.concat()
    }

    /// Program subtrees: a `{ … }` block duplicated, dropped, emptied, swapped for a block from
    /// another entry, or wrapped in a loop.
    fn block_mutation(&self, text: &str, rng: &mut Pcg64Mcg) -> String {
        let t = tokenize(text);
        let blocks = block_ranges(&t);
        let Some(r) = blocks.choose(rng).cloned() else { return self.token_mutation(text, rng) };
        let (before, inner, after) = (t[..r.start].concat(), t[r.clone()].concat(), t[r.end..].concat());
        let other = self.blocks.choose(rng).map_or("{ }", |s| s.as_str());
        let new = match rng.gen_range(0..6) {
            0 => format!("{inner} {inner}"),
            1 => String::new(),
            2 => "{ }".to_string(),
            3 => other.to_string(),
            4 => format!("{{ loop {inner} }}"),
            _ => format!("{{ repeat {} {inner} }}", INTERESTING[rng.gen_range(0..12)]),
        };
        format!("{before}{new}{after}")
    }

    fn line_mutation(&self, text: &str, rng: &mut Pcg64Mcg) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.is_empty() {
            return text.to_string();
        }
        let i = rng.gen_range(0..lines.len());
        match rng.gen_range(0..4) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => lines.insert(i, self.lines.choose(rng).cloned().unwrap_or_default()),
            _ => {
                let j = rng.gen_range(0..lines.len());
                lines.swap(i, j);
            }
        }
        lines.join("\n")
    }

    /// A `key = value` line given another value.
    fn value_mutation(&self, text: &str, rng: &mut Pcg64Mcg) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let kv: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" = ")).collect();
        let Some(&i) = kv.choose(rng) else { return self.line_mutation(text, rng) };
        let key = lines[i].split(" = ").next().unwrap_or("").to_string();
        lines[i] = format!("{key} = {}", self.any_token(rng));
        lines.join("\n")
    }

    /// TOML sections (a header and its lines): duplicated, dropped, or taken from another entry.
    fn section_mutation(&self, text: &str, rng: &mut Pcg64Mcg) -> String {
        let mine = sections(text);
        let other_text = self.inputs.choose(rng).expect("a corpus");
        let theirs = sections(other_text);
        let mut out: Vec<String> = mine.iter().map(|s| s.to_string()).collect();
        let i = rng.gen_range(0..out.len());
        match rng.gen_range(0..3) {
            0 => {
                let s = out[i].clone();
                out.insert(i, s);
            }
            1 if out.len() > 1 => {
                out.remove(i);
            }
            _ => out.insert(i, theirs.choose(rng).map_or(String::new(), |s| s.to_string())),
        }
        out.concat()
    }

    fn set_string(&self, rng: &mut Pcg64Mcg) -> String {
        if rng.gen_ratio(1, 4) {
            if let Some(s) = self.sets.choose(rng) {
                return s.clone();
            }
        }
        let key = SET_KEYS.choose(rng).expect("keys");
        let value = match rng.gen_range(0..4) {
            0 => self.lines.choose(rng).cloned().unwrap_or_default(),
            1 => self.any_token(rng).to_string(),
            _ => INTERESTING.choose(rng).expect("values").to_string(),
        };
        if rng.gen_ratio(1, 20) {
            return value;
        }
        format!("{key}={value}")
    }
}

/// Words (`[A-Za-z0-9_.]` runs), runs of white space, and single other characters: concatenated
/// they give the text back.
fn tokenize(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut prev = None;
    for (i, c) in text.char_indices() {
        let k = class(c);
        if i > start && (prev != Some(k) || k == 2) {
            out.push(&text[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Token ranges of balanced `{ … }`, braces included.
fn block_ranges(t: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut open = Vec::new();
    let mut out = Vec::new();
    for (i, s) in t.iter().enumerate() {
        match *s {
            "{" => open.push(i),
            "}" => {
                if let Some(o) = open.pop() {
                    out.push(o..i + 1);
                }
            }
            _ => {}
        }
    }
    out
}

/// The text before the first header, then each header with the lines up to the next one.
fn sections(text: &str) -> Vec<&str> {
    let mut cuts = vec![0];
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        if l.starts_with('[') && at > 0 {
            cuts.push(at);
        }
        at += l.len();
    }
    cuts.push(text.len());
    cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

fn byte_mutation(b: &[u8], rng: &mut Pcg64Mcg) -> Vec<u8> {
    let mut b = b.to_vec();
    for _ in 0..rng.gen_range(1..5) {
        let i = rng.gen_range(0..=b.len());
        match rng.gen_range(0..4) {
            0 if i < b.len() => b[i] ^= 1 << rng.gen_range(0..8),
            1 if i < b.len() => {
                b.remove(i);
            }
            2 => b.insert(i, rng.gen()),
            _ => b.insert(i, [0xff, 0xc0, 0xe2, 0x80, 0x00][rng.gen_range(0..5)]),
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_give_the_text_back() {
        let s = "a = \"1MiB\"\nprogram = '''\nloop { touch r{i} write }\n'''\n";
        assert_eq!(tokenize(s).concat(), s);
        assert_eq!(sections("x = 1\n[a]\ny = 2\n[[b]]\n").concat(), "x = 1\n[a]\ny = 2\n[[b]]\n");
        assert_eq!(block_ranges(&tokenize("loop { a { b } }")).len(), 2);
    }
}
