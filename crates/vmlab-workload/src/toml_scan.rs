//! A scan of TOML text for what the `toml` crate parses but a scenario cannot hold: datetime
//! values. No scenario field is a date, and a datetime inside the file also defeats the span
//! index (its positions for every other error), so the loader refuses the first one, pointing
//! at it, before anything else.

/// Byte range of the first datetime value (offset date-time, local date-time, local date or
/// local time) outside strings and comments.
pub fn first_datetime(text: &str) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut i = 0;
    // The last significant byte outside strings and comments: a value starts after `=`, `[`, `,`.
    let mut prev = b'\n';
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                i = skip_string(b, i);
                prev = c;
                continue;
            }
            b'0'..=b'9' if matches!(prev, b'=' | b'[' | b',') => {
                if let Some(len) = datetime_len(&b[i..]) {
                    return Some(i..i + len);
                }
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            prev = c;
        }
        i += 1;
    }
    None
}

/// The index just past the string starting at `i` (basic or literal, one-line or multi-line).
fn skip_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = b.len() >= i + 3 && b[i + 1] == q && b[i + 2] == q;
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        if q == b'"' && b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == q && (!triple || (b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q))) {
            // A closing triple quote may be followed by one or two more quotes that belong to
            // the string; the value ends after the last of them.
            let mut end = j + if triple { 3 } else { 1 };
            while triple && b.get(end) == Some(&q) && end < j + 5 {
                end += 1;
            }
            return end;
        }
        if !triple && b[j] == b'\n' {
            return j;
        }
        j += 1;
    }
    b.len()
}

/// The length of a datetime literal at the start of `b`: `YYYY-MM-DD` or `HH:MM:SS` leads it,
/// and it runs to the next space-free separator (a date and a time may be split by one space).
fn datetime_len(b: &[u8]) -> Option<usize> {
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let date = digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-');
    let time = digits(0..2) && b.get(2) == Some(&b':') && digits(3..5);
    if !date && !time {
        return None;
    }
    let end = |from: usize| {
        from + b[from..]
            .iter()
            .position(|c| c.is_ascii_whitespace() || matches!(c, b',' | b']' | b'}' | b'#'))
            .unwrap_or(b.len() - from)
    };
    let mut n = end(0);
    // `1979-05-27 07:32:00`: RFC 3339 allows a space between the date and the time.
    if date && b.get(n) == Some(&b' ') && b.get(n + 1).is_some_and(u8::is_ascii_digit) && b.get(n + 3) == Some(&b':') {
        n = end(n + 1);
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::first_datetime;

    #[test]
    fn finds_datetimes_and_nothing_else() {
        fn at(t: &str) -> Option<&str> {
            first_datetime(t).map(|r| &t[r])
        }
        assert_eq!(at("a = 1979-05-27T07:32:00Z\n"), Some("1979-05-27T07:32:00Z"));
        assert_eq!(at("a = 1979-05-27 07:32:00\nb = 1\n"), Some("1979-05-27 07:32:00"));
        assert_eq!(at("a = [1, 07:32:00]"), Some("07:32:00"));
        assert_eq!(at("t = { x = 2000-01-01 }"), Some("2000-01-01"));
        assert_eq!(at("a = \"1979-05-27\"\nb = '07:32:00' # 2000-01-01\n"), None);
        assert_eq!(at("p = '''\nsleep 1979-05-27\n'''\nq = 1"), None);
        assert_eq!(at("p = \"\"\"\n= 1979-05-27\n\"\"\"\nq = 2020-02-02"), Some("2020-02-02"));
        assert_eq!(at("a = 1000\nb = 12\nc = 1e3"), None);
    }
}
