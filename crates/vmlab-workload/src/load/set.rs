//! `--set KEY=VALUE`: parsing the argument, applying it to the scenario's table, and blaming
//! a deserialisation error on the set that caused it rather than on the file.

use super::spans::{describe_table, reword, toml_error, SpanTree};
use crate::error::{backquoted, suggest, unknown_key_message, ScenarioError};
use crate::scenario::ScenarioFile;

/// One `--set KEY=VALUE` argument.
#[derive(Debug)]
pub(super) struct SetArg {
    pub(super) arg: String,
    /// Byte index of the first `=`.
    pub(super) eq: usize,
    /// Dotted key components with their byte offsets in `arg`.
    pub(super) segs: Vec<(String, usize)>,
    pub(super) value: toml::Value,
    /// Byte offset of the (trimmed) value text in `arg`.
    pub(super) value_at: usize,
    /// The path it set, array elements resolved to indices (filled in by `apply_set`).
    pub(super) resolved: Vec<String>,
}

impl SetArg {
    pub(super) fn parse(arg: &str) -> Result<SetArg, ScenarioError> {
        let bad = |at: usize, len: usize, msg: String| {
            ScenarioError::for_set(arg, at, len, msg)
                .with_help("write `--set KEY=VALUE`, e.g. `--set machine.memory=4GiB` or `--set process.0.count=2`")
        };
        let Some(eq) = arg.find('=') else {
            return Err(bad(0, arg.len(), "malformed --set: expected KEY=VALUE, found no `=`".into()));
        };
        if let Some(colon) = arg[..eq].find(':') {
            return Err(ScenarioError::for_set(
                arg,
                0,
                colon + 1,
                format!(
                    "`{}` scopes a set to one profile of `vmlab reproduce`, which runs several; this run has one profile: write `--set {}`",
                    &arg[..colon + 1],
                    arg[colon + 1..].trim_start()
                ),
            ));
        }
        let mut segs = Vec::new();
        let mut at = 0;
        for seg in arg[..eq].split('.') {
            let t = seg.trim();
            if t.is_empty() {
                return Err(bad(
                    at,
                    seg.len().max(1),
                    format!("malformed --set: empty key component in `{}`", &arg[..eq]),
                ));
            }
            segs.push((t.to_string(), at + (seg.len() - seg.trim_start().len())));
            at += seg.len() + 1;
        }
        let raw = &arg[eq + 1..];
        let value_at = eq + 1 + (raw.len() - raw.trim_start().len());
        let value = set_value(raw.trim());
        Ok(SetArg { arg: arg.to_string(), eq, segs, value, value_at, resolved: Vec::new() })
    }

    pub(super) fn key(&self) -> &str {
        &self.arg[..self.eq]
    }

    pub(super) fn err_seg(&self, i: usize, msg: impl Into<String>) -> ScenarioError {
        let (seg, at) = self.segs.get(i).map_or(("", 0), |(s, a)| (s.as_str(), *a));
        ScenarioError::for_set(&self.arg, at, seg.len(), msg)
    }

    pub(super) fn err_value(&self, msg: impl Into<String>) -> ScenarioError {
        let len = self.arg.len().saturating_sub(self.value_at);
        ScenarioError::for_set(&self.arg, self.value_at, len, msg)
    }
}

/// The value of `--set KEY=TEXT`: TOML when it parses as TOML (`100`, `true`, `"x"`, `[1, 2]`),
/// else a string (`3584MiB`, `50MB/s`, a program, `256,256,32,0`).
pub fn set_value(text: &str) -> toml::Value {
    format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        // A date is no scenario value: `07:30:00` is taken as the text it is.
        .filter(|v| !v.is_datetime())
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// Arrays of tables in a scenario: their elements are addressed by index or by `name`.
const ARRAYS: &[&str] = &["process", "disk", "file", "filetree", "netrx", "kmem", "cgroup"];

/// Apply one set to the table; returns the path it resolved to.
pub(super) fn apply_set(root: &mut toml::Table, s: &SetArg) -> Result<Vec<String>, ScenarioError> {
    let mut resolved = Vec::new();
    let mut table = root;
    let last = s.segs.len().saturating_sub(1);
    let mut i = 0;
    loop {
        let seg = s.segs.get(i).map(|(k, _)| k.clone()).unwrap_or_default();
        resolved.push(seg.clone());
        if i == last {
            table.insert(seg, s.value.clone());
            return Ok(resolved);
        }
        if !table.contains_key(&seg) && ARRAYS.contains(&seg.as_str()) && i == 0 {
            return Err(s.err_seg(i, format!("the scenario has no [[{seg}]]: cannot set `{}`", s.key())));
        }
        // Missing intermediate tables are created (`vm.swappiness` with no [vm] yet).
        let entry = table.entry(seg.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            toml::Value::Array(items) => {
                i += 1;
                let (sel, _) = s.segs.get(i).cloned().unwrap_or_default();
                let idx = match sel.parse::<usize>() {
                    Ok(n) if n < items.len() => n,
                    Ok(n) => {
                        return Err(s.err_seg(
                            i,
                            format!(
                                "there is no `{seg}` number {n}: the scenario has {} (counting from 0)",
                                items.len()
                            ),
                        ))
                    }
                    Err(_) => {
                        let names: Vec<&str> = items.iter().filter_map(|v| v.get("name")?.as_str()).collect();
                        match names.iter().position(|n| *n == sel) {
                            Some(n) => n,
                            None => {
                                let hint = suggest(&sel, names.iter().copied())
                                    .map(|x| format!("; did you mean `{x}`?"))
                                    .unwrap_or_default();
                                return Err(s
                                    .err_seg(i, format!("there is no `{seg}` named `{sel}`{hint}"))
                                    .with_help(format!(
                                        "index `{seg}` by position (0..{}) or by name: {}",
                                        items.len(),
                                        names.join(", ")
                                    )));
                            }
                        }
                    }
                };
                resolved.push(idx.to_string());
                if i == last {
                    if let Some(slot) = items.get_mut(idx) {
                        *slot = s.value.clone();
                    }
                    return Ok(resolved);
                }
                match items.get_mut(idx) {
                    Some(toml::Value::Table(t)) => t,
                    _ => return Err(s.err_seg(i, format!("`{seg}` element {idx} is not a table"))),
                }
            }
            _ => {
                let path: Vec<&str> = s.segs[..=i].iter().map(|(k, _)| k.as_str()).collect();
                return Err(s.err_seg(
                    i + 1,
                    format!("`{}` is a value, not a table: cannot set `{}`", path.join("."), s.key()),
                ));
            }
        };
        i += 1;
    }
}

/// A `--set vars.NAME` must name a variable the file declares: a misspelt one would otherwise
/// define a variable no program reads, and the run would silently use the file's value.
pub(super) fn check_set_vars(original: &toml::Table, sets: &[SetArg]) -> Result<(), ScenarioError> {
    let declared: Vec<&str> = original
        .get("vars")
        .and_then(|v| v.as_table())
        .map(|t| t.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for s in sets {
        let [table, name] = s.resolved.as_slice() else { continue };
        if table != "vars" {
            continue;
        }
        if declared.contains(&name.as_str()) {
            check_set_var_kind(original, name, s)?;
            continue;
        }
        let hint =
            suggest(name, declared.iter().copied()).map(|x| format!("; did you mean `{x}`?")).unwrap_or_default();
        let help = if declared.is_empty() {
            "the scenario has no [vars]: declare the variable there to set it with --set".to_string()
        } else {
            format!("the scenario's [vars]: {}", declared.join(", "))
        };
        return Err(s.err_seg(1, format!("the scenario declares no variable `{name}`{hint}")).with_help(help));
    }
    Ok(())
}

/// A variable declared with a size or a duration keeps that kind under `--set`: its program uses
/// it as bytes or as nanoseconds, so `vars.restart_at=5MiB` (5,242,880 ns) is a mistake, not a
/// setting. A bare integer or a boolean stays accepted, as in the file.
fn check_set_var_kind(original: &toml::Table, name: &str, s: &SetArg) -> Result<(), ScenarioError> {
    use crate::units::{parse_quantity, QuantityKind};
    let kind = |v: Option<&toml::Value>| match v.and_then(|v| v.as_str()).map(parse_quantity) {
        Some(Ok((_, k))) if k != QuantityKind::Plain => Some(k),
        _ => None,
    };
    let declared_value = original.get("vars").and_then(|v| v.get(name));
    let (Some(want), Some(got)) = (kind(declared_value), kind(Some(&s.value))) else { return Ok(()) };
    if want == got {
        return Ok(());
    }
    let word = |k: QuantityKind| if k == QuantityKind::Size { "a size" } else { "a duration" };
    let shown = declared_value.and_then(|v| v.as_str()).unwrap_or_default();
    Err(s.err_value(format!(
        "`vars.{name}` is {} (declared `{shown}`), and `{}` is {}",
        word(want),
        s.value.as_str().unwrap_or_default().trim(),
        word(got)
    )))
}

/// A deserialisation error of the edited table, attributed to the file or to a set.
pub(super) fn deser_error(
    name: &str,
    text: &str,
    tree: &SpanTree,
    original: &toml::Table,
    sets: &[SetArg],
    e: &toml::de::Error,
) -> ScenarioError {
    let msg = e.message().trim_end();
    // An unknown key that a set wrote: blame that set, pointing at the key.
    if let Some(key) = msg.strip_prefix("unknown field ").and_then(|r| backquoted(r).first().copied()) {
        if let Some(s) = sets.iter().rev().find(|s| s.segs.last().is_some_and(|(k, _)| k == key)) {
            let table: Vec<String> = s.resolved.iter().take(s.resolved.len().saturating_sub(1)).cloned().collect();
            if let Some((m, help)) = unknown_key_message(msg, &describe_table(&table)) {
                return s.err_seg(s.segs.len() - 1, m).with_help(help);
            }
        }
    }
    // The same error in the file alone: point at it in the file.
    let text_err = toml::from_str::<ScenarioFile>(text).err();
    if let Some(te) = &text_err {
        if te.message().trim_end() == msg {
            return toml_error(name, text, te, tree);
        }
    }
    // Otherwise, the set after which this error first appeared.
    let deser =
        |t: &toml::Table| t.clone().try_into::<ScenarioFile>().err().map(|e| e.message().trim_end().to_string());
    let mut t = original.clone();
    let mut prev = deser(&t);
    let mut culprit = None;
    for s in sets {
        if apply_set(&mut t, s).is_err() {
            break;
        }
        let cur = deser(&t);
        if cur.as_deref() == Some(msg) && prev.as_deref() != Some(msg) {
            culprit = Some(s);
        }
        prev = cur;
    }
    match (culprit, &text_err) {
        (Some(s), _) => s.err_value(reword(msg)),
        (None, Some(te)) => toml_error(name, text, te, tree),
        (None, None) => ScenarioError::new(name, reword(msg)),
    }
}
