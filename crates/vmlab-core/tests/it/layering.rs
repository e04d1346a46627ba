//! The seam between the machine every era shares and the reclaim engine that differs: only
//! `vmscan/` (the engines and their dispatcher) and the profile table may name an engine, and
//! the type layer (`mm_types`, `mmzone`, `machine`) names no mm module at all. A module that
//! needs an era fact outside reclaim reads a profile field; one that needs the engine calls the
//! `vmscan` functions, which dispatch.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its comments (line comments and doc comments), so that prose may
/// still name an engine.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
        .filter(|(_, l)| !l.trim().is_empty())
}

const ENGINE_PATHS: &[&str] = &["Engine::", "riel24::", "aa24::", "split2636::", "modern::", "zone26::"];

#[test]
fn only_vmscan_and_the_profile_table_name_an_engine() {
    // Examples and integration tests are held to it too: they pick a row by a field or a
    // `vmscan::has_*` predicate, never by its engine.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 50, "found only {} source files under {}", files.len(), src.display());
    sources(&root.join("examples"), &mut files);
    sources(&root.join("tests"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if rel.starts_with("src/vmscan/") || rel == "src/profiles.rs" || rel == "tests/it/layering.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            for pat in ENGINE_PATHS {
                // `crate::vmscan::modern::…` and a bare `modern::…` both count; `x_modern::` does not.
                let mut at = 0;
                while let Some(i) = line[at..].find(pat) {
                    let start = at + i;
                    let prev = line[..start].chars().next_back();
                    if !prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        bad.push(format!("{rel}:{n}: {}", line.trim()));
                    }
                    at = start + pat.len();
                }
            }
        }
    }
    assert!(bad.is_empty(), "engine named outside vmscan/ and profiles.rs:\n{}", bad.join("\n"));
}

#[test]
fn the_type_layer_imports_no_mm_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer = ["mm_types", "mmzone", "machine"];
    let mut bad = Vec::new();
    for m in layer {
        let text = std::fs::read_to_string(src.join(format!("{m}.rs"))).unwrap();
        for (n, line) in code_lines(&text) {
            let mut rest = line;
            while let Some(i) = rest.find("crate::") {
                let name: String = rest[i + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !layer.contains(&name.as_str()) {
                    bad.push(format!("src/{m}.rs:{n}: crate::{name}"));
                }
                rest = &rest[i + 7..];
            }
        }
    }
    assert!(bad.is_empty(), "the type layer reaches into the mm:\n{}", bad.join("\n"));
}
