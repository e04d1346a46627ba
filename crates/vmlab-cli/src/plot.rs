//! `vmlab plot RUN.json... --out FILE.svg|png`: timelines as a chart a reader of vmstat and sar
//! can take in at a glance — each column under its kernel or tool name with its unit, one y axis
//! per unit (left and right), the runs named by what differs between them (as `compare` labels
//! its columns). The same names and units as Python's plots (`python/vmlab/_plot.py`).
//!
//! Written directly as SVG, which needs no font files, so the SVG is the same bytes on every
//! machine. The PNG is that SVG rasterised by resvg: one drawing for both formats, so they cannot
//! drift apart. Its text needs a font from the system, so a PNG is the same bytes for the same
//! runs on one machine, but another machine's fonts draw other pixels.

use std::fmt::Write;

use vmlab_core::stats::compare::kernels;
use vmlab_core::stats::report::RunReport;

/// Timeline column -> (label, unit, scale applied to the values).
pub const COLUMNS: &[(&str, &str, &str, f64)] = &[
    ("free_kb", "MemFree", "MiB", 1.0 / 1024.0),
    ("cached_kb", "Cached", "MiB", 1.0 / 1024.0),
    ("dirty_kb", "Dirty", "MiB", 1.0 / 1024.0),
    ("buff_kb", "Buffers", "MiB", 1.0 / 1024.0),
    ("cache_kb", "cache (vmstat)", "MiB", 1.0 / 1024.0),
    ("swpd_kb", "swpd", "MiB", 1.0 / 1024.0),
    ("swap_used_kb", "swap used", "MiB", 1.0 / 1024.0),
    ("si", "swap in (si)", "KiB/s", 1.0),
    ("so", "swap out (so)", "KiB/s", 1.0),
    ("bi", "blocks in (bi)", "KiB/s", 1.0),
    ("bo", "blocks out (bo)", "KiB/s", 1.0),
    ("in", "interrupts (in)", "per second", 1.0),
    ("cs", "context switches (cs)", "per second", 1.0),
    ("us", "user (us)", "% CPU", 1.0),
    ("sy", "system (sy)", "% CPU", 1.0),
    ("id", "idle (id)", "% CPU", 1.0),
    ("wa", "iowait (wa)", "% CPU", 1.0),
    ("kswapd_cpu_pct", "kswapd", "% of one CPU", 1.0),
    ("pgscank_s", "pgscank/s", "pages/s", 1.0),
    ("pgscand_s", "pgscand/s", "pages/s", 1.0),
    ("pgsteal_s", "pgsteal/s", "pages/s", 1.0),
    ("majflt_s", "majflt/s", "faults/s", 1.0),
    ("r", "runnable (r)", "tasks", 1.0),
    ("b", "blocked (b)", "tasks", 1.0),
];

const W: f64 = 960.0;
const H: f64 = 540.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 80.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLOURS: &[&str] = &["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const DASHES: &[&str] = &["", "8 4", "2 3", "10 3 2 3"];

/// Labels of the runs: what differs between them, else their file names.
fn run_labels(runs: &[(String, RunReport)]) -> Vec<String> {
    let cols = kernels::columns(runs);
    if cols.len() == runs.len() {
        cols.into_iter().map(|c| c.label).collect()
    } else {
        runs.iter().enumerate().map(|(i, (n, r))| format!("{n} {} #{}", r.profile, i + 1)).collect()
    }
}

fn values(r: &RunReport, column: &str, scale: f64) -> Vec<(f64, f64)> {
    r.timeline
        .iter()
        .filter_map(|s| {
            let v = serde_json::to_value(s).ok()?;
            Some((s.t_s, v.get(column)?.as_f64()? * scale))
        })
        .collect()
}

/// Round tick positions covering `lo..hi`: steps of 1, 2 or 5 times a power of ten.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * p).find(|s| *s >= raw).unwrap_or(10.0 * p);
    let mut v = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.0}k", v / 1e3)
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The chart of `columns` of `runs`, as SVG text; an error for an unknown column or more than
/// two units.
pub fn svg(runs: &[(String, RunReport)], columns: &[String]) -> Result<String, String> {
    let mut meta = Vec::new();
    for c in columns {
        let m = COLUMNS.iter().find(|m| m.0 == c.as_str()).ok_or_else(|| {
            let known: Vec<&str> = COLUMNS.iter().map(|m| m.0).collect();
            format!("--columns {c}: no such timeline column (known: {})", known.join(", "))
        })?;
        meta.push(*m);
    }
    let mut units: Vec<&str> = Vec::new();
    for m in &meta {
        if !units.contains(&m.2) {
            units.push(m.2);
        }
    }
    if units.len() > 2 {
        return Err(format!(
            "--columns: {} units ({}): at most two per chart, one axis each",
            units.len(),
            units.join(", ")
        ));
    }
    let labels = run_labels(runs);
    // Series: (run index, column index, points).
    let mut series = Vec::new();
    for (ri, (_, r)) in runs.iter().enumerate() {
        for (ci, m) in meta.iter().enumerate() {
            series.push((ri, ci, values(r, m.0, m.3)));
        }
    }
    if series.iter().all(|s| s.2.is_empty()) {
        // Else an empty frame whose time axis reads 0 at every tick.
        let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "{}: no timeline samples to draw (each run ended before its first sampling interval; \
             a shorter `interval` in the scenario samples more often)",
            names.join(", ")
        ));
    }
    let t_max = series.iter().flat_map(|s| s.2.iter().map(|p| p.0)).fold(0.0, f64::max).max(1e-9);
    let y_max: Vec<f64> = units
        .iter()
        .map(|u| {
            let m =
                series.iter().filter(|s| meta[s.1].2 == *u).flat_map(|s| s.2.iter().map(|p| p.1)).fold(0.0, f64::max);
            if m > 0.0 {
                m * 1.05
            } else {
                1.0
            }
        })
        .collect();
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |t: f64| LEFT + t / t_max * pw;
    let y = |v: f64, axis: usize| TOP + ph - v / y_max[axis] * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
    let mut scenarios: Vec<&str> = runs.iter().map(|(_, r)| r.scenario.as_str()).collect();
    scenarios.dedup();
    let title = if runs.len() == 1 {
        format!("{} — {}", runs[0].1.scenario, runs[0].1.profile)
    } else {
        scenarios.join(", ")
    };
    let _ =
        writeln!(s, "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>", W / 2.0, esc(&title));
    // Axes, ticks and grid.
    let _ =
        writeln!(s, "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>");
    for t in ticks(0.0, t_max) {
        let px = x(t);
        let _ = writeln!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP + ph,
            TOP + ph + 16.0,
            fmt_tick(t)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">simulated time (s)</text>",
        LEFT + pw / 2.0,
        H - 18.0
    );
    for (axis, unit) in units.iter().enumerate() {
        let (ax, anchor, dx) = if axis == 0 { (LEFT, "end", -6.0) } else { (LEFT + pw, "start", 6.0) };
        for v in ticks(0.0, y_max[axis]) {
            let py = y(v, axis);
            if axis == 0 {
                let _ = writeln!(
                    s,
                    "<line x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#eee\"/>",
                    LEFT + pw
                );
            }
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
                ax + dx,
                py + 4.0,
                fmt_tick(v)
            );
        }
        let lx = if axis == 0 { 20.0 } else { W - 14.0 };
        let _ = writeln!(
            s,
            "<text x=\"{lx}\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 {lx} {:.1})\">{}</text>",
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            esc(unit)
        );
    }
    // Lines, then one legend entry per line.
    let mut legend = Vec::new();
    for (ri, ci, pts) in &series {
        let axis = units.iter().position(|u| *u == meta[*ci].2).unwrap_or(0);
        let colour = COLOURS[ci % COLOURS.len()];
        let dash = DASHES[ri % DASHES.len()];
        let d: Vec<String> = pts.iter().map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v, axis))).collect();
        let dash_attr = if dash.is_empty() { String::new() } else { format!(" stroke-dasharray=\"{dash}\"") };
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"{dash_attr} points=\"{}\"/>",
            d.join(" ")
        );
        let side = if units.len() > 1 {
            format!(", {} axis", if axis == 0 { "left" } else { "right" })
        } else {
            String::new()
        };
        let name = if runs.len() > 1 {
            format!("{}: {}{side}", labels[*ri], meta[*ci].1)
        } else {
            format!("{}{side}", meta[*ci].1)
        };
        legend.push((colour, dash_attr, name));
    }
    let lw = legend.iter().map(|l| l.2.chars().count()).max().unwrap_or(0) as f64 * 7.0 + 40.0;
    let (lx, ly) = (LEFT + pw - lw - 8.0, TOP + 8.0);
    let _ = writeln!(
        s,
        "<rect x=\"{lx:.1}\" y=\"{ly:.1}\" width=\"{lw:.1}\" height=\"{:.1}\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#999\"/>",
        legend.len() as f64 * 16.0 + 8.0
    );
    for (i, (colour, dash_attr, name)) in legend.iter().enumerate() {
        let yy = ly + 14.0 + i as f64 * 16.0;
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash_attr}/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            lx + 6.0,
            yy - 4.0,
            lx + 30.0,
            yy - 4.0,
            lx + 36.0,
            yy,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// Fonts tried for the chart's `sans-serif`, in order, before any other family on the system:
/// named so that the choice does not depend on the order a directory lists its files in.
const SANS: &[&str] = &["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "Helvetica", "FreeSans"];

/// The system's fonts as fontconfig's configuration and the usual directories list them.
pub fn system_fonts() -> resvg::usvg::fontdb::Database {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_system_fonts();
    db
}

/// `svg` (as [`svg`] writes it) as a PNG at twice its size, its text in `fonts`' sans-serif
/// family; an error naming the cure when `fonts` is empty, since a chart without its labels and
/// units would be read wrong.
pub fn png(svg: &str, mut fonts: resvg::usvg::fontdb::Database) -> Result<Vec<u8>, String> {
    let mut families: Vec<String> =
        fonts.faces().flat_map(|f| f.families.iter().map(|(name, _)| name.clone())).collect();
    families.sort();
    families.dedup();
    let family = SANS
        .iter()
        .find(|s| families.iter().any(|f| f == *s))
        .map(|s| s.to_string())
        .or_else(|| families.first().cloned())
        .ok_or(
            "no fonts found (fontconfig's directories, /usr/share/fonts, ~/.fonts) to draw the chart's text; \
             install one (Debian/Ubuntu: fonts-dejavu-core) or write the chart as .svg",
        )?;
    // usvg falls back to the serif family when a face is missing: the same one, so that every
    // label is drawn in the font chosen above.
    fonts.set_sans_serif_family(family.clone());
    fonts.set_serif_family(family.clone());
    let opts = resvg::usvg::Options { font_family: family, fontdb: std::sync::Arc::new(fonts), ..Default::default() };
    let tree = resvg::usvg::Tree::from_str(svg, &opts).map_err(|e| format!("the chart's SVG does not parse: {e}"))?;
    let scale = 2.0;
    let size = tree.size().to_int_size().scale_by(scale).ok_or("the chart has no size")?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the chart's PNG size is out of range")?;
    resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("PNG encoding failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vmlab_core::stats::timeline::Sample;

    fn run(profile: &str, free: &[u64]) -> RunReport {
        let timeline = free
            .iter()
            .enumerate()
            .map(|(i, f)| Sample { t_s: i as f64 + 1.0, free_kb: *f, so: 100 * i as u64, ..Default::default() })
            .collect();
        RunReport { profile: profile.into(), scenario: "s".into(), timeline, ..Default::default() }
    }

    #[test]
    fn two_runs_two_units_are_labelled_with_an_axis_each() {
        let runs = vec![
            ("a.json".into(), run("linux-2.6.26", &[4096, 2048])),
            ("b.json".into(), run("linux-6.8", &[4096, 1024])),
        ];
        let s = svg(&runs, &["free_kb".into(), "so".into()]).expect("chart");
        for want in [
            "simulated time (s)",
            ">MiB<",
            ">KiB/s<",
            "linux-2.6.26: MemFree, left axis",
            "linux-6.8: swap out (so), right axis",
        ] {
            assert!(s.contains(want), "missing {want}");
        }
        assert_eq!(s.matches("<polyline").count(), 4);
        assert_eq!(s.matches("linux-6.8: MemFree").count(), 1, "each line once in the legend");
    }

    #[test]
    fn three_units_and_unknown_columns_are_refused() {
        let runs = vec![("a.json".into(), run("linux-6.8", &[1]))];
        let e = svg(&runs, &["free_kb".into(), "so".into(), "cs".into()]).expect_err("three units");
        assert!(e.contains("at most two"), "{e}");
        let e = svg(&runs, &["free".into()]).expect_err("unknown column");
        assert!(e.contains("free_kb"), "{e}");
    }

    #[test]
    fn runs_without_samples_are_refused_not_drawn_empty() {
        let runs = vec![("a.json".into(), run("linux-6.8", &[])), ("b.json".into(), run("linux-2.4.9", &[]))];
        let e = svg(&runs, &["free_kb".into()]).expect_err("nothing to draw");
        assert!(e.starts_with("a.json, b.json: no timeline samples"), "{e}");
        // One run with samples is enough to draw.
        let runs = vec![("a.json".into(), run("linux-6.8", &[])), ("b.json".into(), run("linux-2.4.9", &[1]))];
        assert!(svg(&runs, &["free_kb".into()]).is_ok());
    }

    #[test]
    fn png_is_the_svg_drawn_twice_as_large_and_needs_a_font() {
        let runs = vec![("a.json".into(), run("linux-6.8", &[4096, 2048, 1024]))];
        let s = svg(&runs, &["free_kb".into()]).expect("chart");
        let e = png(&s, resvg::usvg::fontdb::Database::new()).expect_err("no fonts");
        assert!(e.contains("no fonts found") && e.contains(".svg"), "{e}");
        let fonts = system_fonts();
        if fonts.is_empty() {
            return; // The CLI's test (tests/it/tool.rs) fails on such a machine; this one checks the error.
        }
        let p = png(&s, fonts).expect("png");
        assert_eq!(&p[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, at bytes 16..24.
        assert_eq!(&p[16..24], &[0, 0, 0x07, 0x80, 0, 0, 0x04, 0x38], "1920 x 1080");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let small: Vec<String> = ticks(0.0, 0.9).iter().map(|t| fmt_tick(*t)).collect();
        assert_eq!(small, ["0", "0.2", "0.4", "0.6", "0.8"]);
    }
}
