//! Where things are in a scenario's original text: the index of key and value positions that
//! lets every loader error point at a file, line and column although `--set`s edit a table
//! that has no positions.

use std::ops::Range;

use crate::error::{unknown_key_message, ScenarioError};
use crate::toml_spans;

/// Byte ranges of every key and value of the original file, by path (array elements are
/// addressed by their index written as a decimal string).
#[derive(Default, Debug)]
pub(super) struct SpanTree {
    pub(super) span: Range<usize>,
    pub(super) node: Node,
}

#[derive(Default, Debug)]
pub(super) enum Node {
    #[default]
    Leaf,
    Table(Vec<(String, Range<usize>, SpanTree)>),
    Array(Vec<SpanTree>),
}

impl SpanTree {
    /// Index `text`; a file the index can't handle (it can always parse what `toml` parses,
    /// except perhaps exotic datetimes) just yields no positions rather than an error.
    pub(super) fn build(text: &str) -> SpanTree {
        toml::from_str::<toml_spans::Bare>(text).map_or_else(
            |_| SpanTree::default(),
            |n| SpanTree::from_spanned(toml_spans::Spanned(Some(0..text.len()), n.0), None),
        )
    }

    /// A value the deserializer gives no span (a table made by a dotted key or a header) is
    /// placed at its key, or else at its first key; a key without one, at its value.
    pub(super) fn from_spanned(s: toml_spans::Spanned, key: Option<Range<usize>>) -> SpanTree {
        let node = match s.1 {
            toml_spans::Node::Leaf => Node::Leaf,
            toml_spans::Node::Array(items) => {
                Node::Array(items.into_iter().map(|v| Self::from_spanned(v, None)).collect())
            }
            toml_spans::Node::Table(kv) => Node::Table(
                kv.into_iter()
                    .map(|(k, v)| {
                        let t = Self::from_spanned(v, k.1.clone());
                        (k.0, k.1.unwrap_or_else(|| t.span.clone()), t)
                    })
                    .collect(),
            ),
        };
        let first = || match &node {
            Node::Table(kv) => kv.first().map(|(_, r, _)| r.clone()),
            Node::Array(items) => items.first().map(|t| t.span.clone()),
            Node::Leaf => None,
        };
        let span = s.0.or(key).or_else(first).unwrap_or(0..0);
        SpanTree { span, node }
    }

    pub(super) fn get(&self, path: &[&str]) -> Option<&SpanTree> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let child = match &self.node {
            Node::Table(kv) => kv.iter().find(|(k, _, _)| k == first).map(|(_, _, v)| v),
            Node::Array(items) => first.parse::<usize>().ok().and_then(|i| items.get(i)),
            Node::Leaf => None,
        }?;
        child.get(rest)
    }

    /// The byte range of the key at `path` (its last component).
    pub(super) fn key_range(&self, path: &[&str]) -> Option<Range<usize>> {
        let (last, parent) = path.split_last()?;
        match &self.get(parent)?.node {
            Node::Table(kv) => kv.iter().find(|(k, _, _)| k == last).map(|(_, r, _)| r.clone()),
            _ => None,
        }
    }

    /// The path of the table holding the key whose span starts at `offset`.
    pub(super) fn table_of_key_at(&self, offset: usize) -> Option<Vec<String>> {
        match &self.node {
            Node::Table(kv) => {
                for (k, r, v) in kv {
                    if r.start == offset {
                        return Some(Vec::new());
                    }
                    if let Some(mut p) = v.table_of_key_at(offset) {
                        p.insert(0, k.clone());
                        return Some(p);
                    }
                }
                None
            }
            Node::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
                let mut p = v.table_of_key_at(offset)?;
                p.insert(0, i.to_string());
                Some(p)
            }),
            Node::Leaf => None,
        }
    }
}

/// "in [machine]", "in [[process]]", "at the top level".
pub(super) fn describe_table(path: &[String]) -> String {
    if path.is_empty() {
        return "at the top level".into();
    }
    let named: Vec<&str> = path.iter().filter(|s| s.parse::<usize>().is_err()).map(String::as_str).collect();
    if path.last().is_some_and(|s| s.parse::<usize>().is_ok()) {
        format!("in [[{}]]", named.join("."))
    } else {
        format!("in [{}]", named.join("."))
    }
}

/// serde says "invalid type: integer `5`, expected a string"; we say it the other way round,
/// like every other message here ("expected …, found …").
pub(super) fn reword(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!("expected {expected}, found {found}");
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("missing required key {rest}");
    }
    msg.trim_end().to_string()
}

/// A `toml` error (syntax, or deserialisation from text) as a `ScenarioError`.
pub(super) fn toml_error(name: &str, text: &str, e: &toml::de::Error, tree: &SpanTree) -> ScenarioError {
    let msg = e.message().trim_end();
    let Some(span) = e.span() else {
        return ScenarioError::new(name, reword(msg));
    };
    if let Some(table) = tree.table_of_key_at(span.start) {
        if let Some((m, help)) = unknown_key_message(msg, &describe_table(&table)) {
            return ScenarioError::at(name, text, span.start, span.len(), m).with_label("unknown key").with_help(help);
        }
    }
    ScenarioError::at(name, text, span.start, span.len(), reword(msg))
}
