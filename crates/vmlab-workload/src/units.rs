//! Quantities with units, as written in scenarios and programs: sizes ("2GiB"), durations
//! ("1.5s"), bandwidths ("24MB/s") and rates ("2000/s").
//!
//! All arithmetic is integer (u128 intermediate, checked at the end) so that "1.5GiB" is exactly
//! 1610612736 bytes on every machine: determinism forbids float rounding creeping into inputs.
//! Errors are plain strings; the caller knows where the value sits and wraps them in a
//! `ScenarioError` with a span.

/// Size units: binary `K M G T` and `KiB..TiB`, decimal `KB..TB`, `B` (or nothing) for bytes.
const SIZE_UNITS: &[(&str, u128)] = &[
    ("", 1),
    ("B", 1),
    ("K", 1 << 10),
    ("KiB", 1 << 10),
    ("M", 1 << 20),
    ("MiB", 1 << 20),
    ("G", 1 << 30),
    ("GiB", 1 << 30),
    ("T", 1 << 40),
    ("TiB", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

/// Duration units, in nanoseconds.
const DURATION_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// A number as written: integer digits, fraction digits (both without `_`), and the rest.
struct Number<'a> {
    int: &'a str,
    frac: &'a str,
    unit: &'a str,
}

/// Split "1.5 GiB" into ("1", "5", "GiB"). `_` separators are allowed in the digits (like TOML).
fn split_number(s: &str) -> Result<Number<'_>, String> {
    let s = s.trim();
    let digits_end =
        |from: usize| s[from..].find(|c: char| !(c.is_ascii_digit() || c == '_')).map_or(s.len(), |i| from + i);
    let int_end = digits_end(0);
    let int = &s[..int_end];
    if int.is_empty() || int.starts_with('_') {
        return Err(if s.is_empty() {
            "empty value: expected a number".to_string()
        } else {
            format!("`{s}` is not a number: expected digits first")
        });
    }
    let (frac, rest_start) = if s[int_end..].starts_with('.') {
        let frac_end = digits_end(int_end + 1);
        if frac_end == int_end + 1 {
            return Err(format!("`{s}`: expected digits after the decimal point"));
        }
        (&s[int_end + 1..frac_end], frac_end)
    } else {
        ("", int_end)
    };
    Ok(Number { int, frac, unit: s[rest_start..].trim_start() })
}

/// `int.frac * mult`, rounded down, checked to fit a u64.
fn scale(n: &Number<'_>, mult: u128, whole: &str) -> Result<u64, String> {
    let too_big = || format!("`{whole}` is too large");
    let digits = |d: &str| -> Result<u128, String> {
        d.chars()
            .filter(|&c| c != '_')
            .try_fold(0u128, |acc, c| acc.checked_mul(10)?.checked_add(u128::from(c.to_digit(10)?)))
            .ok_or_else(too_big)
    };
    let int = digits(n.int)?;
    let frac_digits: String = n.frac.chars().filter(|&c| c != '_').take(18).collect();
    let frac = digits(&frac_digits)?;
    let denom = 10u128.pow(frac_digits.len() as u32);
    let value = int.checked_mul(mult).and_then(|v| v.checked_add(frac * mult / denom)).ok_or_else(too_big)?;
    u64::try_from(value).map_err(|_| too_big())
}

fn unit_list(units: &[(&str, u128)]) -> String {
    units.iter().filter(|(u, _)| !u.is_empty()).map(|(u, _)| *u).collect::<Vec<_>>().join(" ")
}

/// A size in bytes: "4096", "4K", "1.5GiB", "24MB" (decimal), "512B". Fractions round down.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let n = split_number(s)?;
    match SIZE_UNITS.iter().find(|(u, _)| *u == n.unit) {
        Some((_, mult)) => scale(&n, *mult, s.trim()),
        None => {
            Err(format!("unknown size unit `{}` in `{}`: expected one of {}", n.unit, s.trim(), unit_list(SIZE_UNITS)))
        }
    }
}

/// A size given either as a TOML integer (bytes) or a string with units.
pub fn size_from_value(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).map_err(|_| format!("size {i} is negative")),
        toml::Value::String(s) => parse_size(s),
        other => Err(format!("expected a size (an integer or a string like \"2GiB\"), found a {}", other.type_str())),
    }
}

/// A duration in nanoseconds: "10ms", "1.5s", "2min", "100us". A bare number must be 0: any
/// other unitless duration is ambiguous, so we ask for a unit rather than guess.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let n = split_number(s)?;
    if n.unit.is_empty() {
        let v = scale(&n, 1, s.trim())?;
        return if v == 0 {
            Ok(0)
        } else {
            Err(format!(
                "duration `{}` needs a unit: one of {} (e.g. `{}s`)",
                s.trim(),
                unit_list(DURATION_UNITS),
                s.trim()
            ))
        };
    }
    match DURATION_UNITS.iter().find(|(u, _)| *u == n.unit) {
        Some((_, mult)) => scale(&n, *mult, s.trim()),
        None => Err(format!(
            "unknown duration unit `{}` in `{}`: expected one of {}",
            n.unit,
            s.trim(),
            unit_list(DURATION_UNITS)
        )),
    }
}

/// A cost-table entry: a positive duration string ("240ns", "1.2us").
pub fn cost_from_value(v: &toml::Value) -> Result<u64, String> {
    let ns = match v {
        toml::Value::String(s) => parse_duration(s)?,
        other => return Err(format!("expected a duration such as \"240ns\", found {}", other.type_str())),
    };
    if ns == 0 {
        return Err("a cost must be at least 1ns".into());
    }
    Ok(ns)
}

/// Split "24MB/s" into ("24MB", true); "/sec" is accepted as well as "/s".
fn strip_per_second(s: &str) -> (&str, bool) {
    let t = s.trim();
    for suffix in ["/s", "/sec"] {
        if let Some(head) = t.strip_suffix(suffix) {
            return (head.trim_end(), true);
        }
    }
    (t, false)
}

/// A bandwidth in bytes per second: "24MB/s", "1GiB/s". A plain integer is bytes per second.
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let (head, per_s) = strip_per_second(s);
    if !per_s && !head.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return Err(format!("bandwidth `{}` must end in `/s` (e.g. `24MB/s`)", s.trim()));
    }
    parse_size(head).map_err(|e| format!("bad bandwidth `{}`: {e}", s.trim()))
}

/// An event rate per second: "2000/s" or a plain number ("2000"). Fractions round down.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (head, _) = strip_per_second(s);
    let n = split_number(head)?;
    if !n.unit.is_empty() {
        return Err(format!("rate `{}`: expected a number of events per second like `2000/s`", s.trim()));
    }
    scale(&n, 1, s.trim())
}

/// A rate given as a TOML integer or a string ("2000/s").
pub fn rate_from_value(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).map_err(|_| format!("rate {i} is negative")),
        toml::Value::String(s) => parse_rate(s),
        other => Err(format!("expected a rate like \"2000/s\", found a {}", other.type_str())),
    }
}

/// What kind of quantity a program literal turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityKind {
    Plain,
    Size,
    Duration,
}

/// A number literal in a program: a plain integer, a size (bytes) or a duration (ns), told
/// apart by the unit. A fraction without a unit is refused: expressions are integers.
pub fn parse_quantity(s: &str) -> Result<(u64, QuantityKind), String> {
    let n = split_number(s)?;
    if n.unit.is_empty() {
        if !n.frac.is_empty() {
            return Err(format!("`{}`: fractional numbers need a unit (expressions are integers)", s.trim()));
        }
        return Ok((scale(&n, 1, s.trim())?, QuantityKind::Plain));
    }
    if let Some((_, mult)) = SIZE_UNITS.iter().find(|(u, _)| *u == n.unit) {
        return Ok((scale(&n, *mult, s.trim())?, QuantityKind::Size));
    }
    if let Some((_, mult)) = DURATION_UNITS.iter().find(|(u, _)| *u == n.unit) {
        return Ok((scale(&n, *mult, s.trim())?, QuantityKind::Duration));
    }
    Err(format!(
        "unknown unit `{}` in `{}`: expected a size unit ({}) or a duration unit ({})",
        n.unit,
        s.trim(),
        unit_list(SIZE_UNITS),
        unit_list(DURATION_UNITS)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("427_683_520"), Ok(427_683_520));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("24MB"), Ok(24_000_000));
        assert_eq!(parse_size("1TB"), Ok(1_000_000_000_000));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size(" 16 MiB "), Ok(16 << 20));
        assert!(parse_size("3Gx").unwrap_err().contains("unknown size unit `Gx`"));
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("1.MiB").is_err());
        assert!(parse_size("99999999999TiB").unwrap_err().contains("too large"));
    }

    #[test]
    fn size_values() {
        assert_eq!(size_from_value(&toml::Value::Integer(10)), Ok(10));
        assert_eq!(size_from_value(&toml::Value::String("1K".into())), Ok(1024));
        assert!(size_from_value(&toml::Value::Integer(-1)).is_err());
        assert!(size_from_value(&toml::Value::Boolean(true)).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10ms"), Ok(10_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("100us"), Ok(100_000));
        assert_eq!(parse_duration("7ns"), Ok(7));
        assert_eq!(parse_duration("2min"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("600").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("3d").unwrap_err().contains("unknown duration unit"));
    }

    #[test]
    fn bandwidths_and_rates() {
        assert_eq!(parse_bandwidth("24MB/s"), Ok(24_000_000));
        assert_eq!(parse_bandwidth("1GiB/s"), Ok(1 << 30));
        assert_eq!(parse_bandwidth("1000"), Ok(1000));
        assert!(parse_bandwidth("24MB").is_err());
        assert_eq!(parse_rate("2000/s"), Ok(2000));
        assert_eq!(parse_rate("2000"), Ok(2000));
        assert_eq!(parse_rate("2.5/s"), Ok(2));
        assert!(parse_rate("2k/s").is_err());
        assert_eq!(rate_from_value(&toml::Value::Integer(5)), Ok(5));
    }

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("4096"), Ok((4096, QuantityKind::Plain)));
        assert_eq!(parse_quantity("1MiB"), Ok((1 << 20, QuantityKind::Size)));
        assert_eq!(parse_quantity("10ms"), Ok((10_000_000, QuantityKind::Duration)));
        assert_eq!(parse_quantity("1.5s"), Ok((1_500_000_000, QuantityKind::Duration)));
        assert!(parse_quantity("1.5").is_err());
        assert!(parse_quantity("5x").is_err());
    }
}
