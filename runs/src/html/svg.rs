//! Inline SVG figures: a heat map, line charts and bar charts. Each written
//! value is tied to its data like the numbers in tables
//! ([`super::markup::data_attrs`]); shapes get a `<title>` for hover text.

use std::fmt::Write as _;

use super::markup::{Fmt, Ptr, data_attrs, esc};

/// Colours of series, distinguishable and legible on white.
const PALETTE: [&str; 8] = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];

/// The colour of the `i`-th series.
pub(super) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A heat-map fill for a value in [0, 1]: red at 0 through yellow to green at 1.
fn heat(value: f64) -> String {
    format!("hsl({:.0}, 70%, 72%)", value.clamp(0.0, 1.0) * 120.0)
}

/// One cell of a heat map.
#[derive(Debug)]
pub(super) struct Cell {
    pub(super) row: usize,
    pub(super) column: usize,
    pub(super) value: Option<f64>,
    pub(super) ptr: Ptr,
}

/// A heat map: `rows` down (e.g. ε), `columns` across (e.g. λ), each cell
/// coloured by its value and labelled with it as a percentage.
pub(super) fn heat_map(title: &str, row_axis: &str, rows: &[String], column_axis: &str, columns: &[String], cells: &[Cell]) -> String {
    let (cell_w, cell_h, left, top) = (84.0, 40.0, 64.0, 34.0);
    let width = left + cell_w * columns.len() as f64 + 12.0;
    let height = top + cell_h * rows.len() as f64 + 50.0;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="14" text-anchor="middle" class="label">{} →</text>"#,
        left + cell_w * columns.len() as f64 / 2.0,
        esc(column_axis)
    );
    for (c, label) in columns.iter().enumerate() {
        let _ =
            write!(out, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, left + cell_w * (c as f64 + 0.5), top - 6.0, esc(label));
    }
    let _ = write!(out, r#"<text x="4" y="{}" class="label">{} ↓</text>"#, top - 6.0, esc(row_axis));
    for (r, label) in rows.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            left - 8.0,
            top + cell_h * (r as f64 + 0.5) + 4.0,
            esc(label)
        );
    }
    for cell in cells {
        let (x, y) = (left + cell_w * cell.column as f64, top + cell_h * cell.row as f64);
        let fill = cell.value.map_or("#e5e7eb".to_owned(), heat);
        let hover = format!("{} = {}, {} = {}", row_axis, rows[cell.row], column_axis, columns[cell.column]);
        let _ = write!(
            out,
            r##"<rect x="{x}" y="{y}" width="{}" height="{}" fill="{fill}" stroke="#ffffff" stroke-width="2"><title>{}</title></rect>"##,
            cell_w,
            cell_h,
            esc(&hover)
        );
        let (tx, ty) = (x + cell_w / 2.0, y + cell_h / 2.0 + 4.0);
        match cell.value {
            Some(value) => {
                let fmt = Fmt::Pct(1);
                let _ = write!(
                    out,
                    r#"<text x="{tx}" y="{ty}" text-anchor="middle" font-weight="600" {}>{:.1}%</text>"#,
                    data_attrs(&cell.ptr, fmt),
                    value * 100.0
                );
            }
            None => {
                let _ = write!(out, r#"<text x="{tx}" y="{ty}" text-anchor="middle" class="label">n/a</text>"#);
            }
        }
    }
    let _ = write!(out, r#"<text x="{left}" y="{}" class="label">{}</text>"#, height - 28.0, esc(title));
    // The colour scale.
    for (i, step) in [0.0, 0.25, 0.5, 0.75, 1.0].into_iter().enumerate() {
        let x = left + 34.0 * i as f64;
        let _ = write!(out, r#"<rect x="{x}" y="{}" width="32" height="12" fill="{}"/>"#, height - 18.0, heat(step));
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" class="label" font-size="9">{:.0}%</text>"#,
            x + 16.0,
            height - 8.5,
            step * 100.0
        );
    }
    out.push_str("</svg>");
    out
}

/// One line of a line chart.
#[derive(Debug)]
pub(super) struct Series {
    pub(super) label: String,
    /// (x, y in [0, 1], where y comes from).
    pub(super) points: Vec<(u32, Option<f64>, Ptr)>,
    /// Drawn thicker, with its values written next to the points.
    pub(super) emphasis: bool,
}

/// A line chart of values in [0, 1] over x = 1..=max_x, with a legend.
pub(super) fn line_chart(title: &str, x_axis: &str, max_x: u32, series: &[Series]) -> String {
    let (left, top, plot_w, plot_h) = (44.0, 24.0, 320.0, 170.0);
    let legend_h = 16.0 * series.len() as f64;
    let (width, height) = (left + plot_w + 48.0, top + plot_h + 40.0 + legend_h);
    let max_x = max_x.max(1);
    let x_of = |x: u32| if max_x == 1 { left + plot_w / 2.0 } else { left + plot_w * f64::from(x - 1) / f64::from(max_x - 1) };
    let y_of = |y: f64| top + plot_h * (1.0 - y.clamp(0.0, 1.0));
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="lines" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
        esc(title)
    );
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let y = y_of(tick);
        let _ = write!(out, r#"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" class="grid"/>"#, left + plot_w);
        let _ = write!(out, r#"<text x="{}" y="{}" text-anchor="end" class="label">{:.0}%</text>"#, left - 6.0, y + 4.0, tick * 100.0);
    }
    for x in 1..=max_x {
        let _ = write!(out, r#"<text x="{}" y="{}" text-anchor="middle" class="label">{x}</text>"#, x_of(x), top + plot_h + 16.0);
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" class="label">{}</text>"#,
        left + plot_w / 2.0,
        top + plot_h + 32.0,
        esc(x_axis)
    );
    let _ = write!(out, r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" class="axis"/>"#, top + plot_h);
    for (i, line) in series.iter().enumerate() {
        let colour = colour(i);
        let stroke = if line.emphasis { 3.0 } else { 1.5 };
        let points: Vec<String> = line.points.iter().filter_map(|(x, y, _)| y.map(|y| format!("{:.1},{:.1}", x_of(*x), y_of(y)))).collect();
        if points.len() > 1 {
            let _ = write!(out, r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="{stroke}"/>"#, points.join(" "));
        }
        for (x, y, ptr) in &line.points {
            let Some(y) = y else { continue };
            let (cx, cy) = (x_of(*x), y_of(*y));
            let _ = write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{}" fill="{colour}"><title>{} at k = {x}: {:.1}%</title></circle>"#,
                if line.emphasis { 4 } else { 3 },
                esc(&line.label),
                y * 100.0
            );
            if line.emphasis {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}" {}>{:.1}%</text>"#,
                    cx + 6.0,
                    cy - 7.0,
                    data_attrs(ptr, Fmt::Pct(1)),
                    y * 100.0
                );
            }
        }
        let ly = top + plot_h + 48.0 + 16.0 * i as f64;
        let _ = write!(out, r#"<rect x="{left}" y="{}" width="14" height="4" fill="{colour}"/>"#, ly - 5.0);
        let _ = write!(out, r#"<text x="{}" y="{ly}">{}</text>"#, left + 20.0, esc(&line.label));
    }
    out.push_str("</svg>");
    out
}

/// One group of bars (one row label, a bar per series).
#[derive(Debug)]
pub(super) struct BarGroup {
    pub(super) label: String,
    /// (value in [0, 1], where it comes from), one per series.
    pub(super) bars: Vec<(Option<f64>, Ptr)>,
}

/// Horizontal bars of values in [0, 1], grouped by row, with a legend of the series.
pub(super) fn bar_chart(title: &str, series: &[&str], groups: &[BarGroup]) -> String {
    let (left, plot_w, bar_h, gap) = (150.0, 240.0, 14.0, 10.0);
    let per_group = bar_h * series.len().max(1) as f64 + gap;
    let legend_h = if series.len() > 1 { 20.0 } else { 0.0 };
    let (width, height) = (left + plot_w + 70.0, legend_h + per_group * groups.len() as f64 + 8.0);
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="bars" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
        esc(title)
    );
    if series.len() > 1 {
        let mut x = left;
        for (i, name) in series.iter().enumerate() {
            let _ = write!(out, r#"<rect x="{x}" y="4" width="10" height="10" fill="{}"/>"#, colour(i));
            let _ = write!(out, r#"<text x="{}" y="13">{}</text>"#, x + 14.0, esc(name));
            x += 24.0 + 7.0 * name.chars().count() as f64;
        }
    }
    for (g, group) in groups.iter().enumerate() {
        let y0 = legend_h + per_group * g as f64;
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y0 + bar_h * group.bars.len() as f64 / 2.0 + 4.0,
            esc(&group.label)
        );
        for (b, (value, ptr)) in group.bars.iter().enumerate() {
            let y = y0 + bar_h * b as f64;
            let _ = write!(out, r##"<rect x="{left}" y="{y}" width="{plot_w}" height="{}" fill="#f3f4f6"/>"##, bar_h - 2.0);
            match value {
                Some(value) => {
                    let w = plot_w * value.clamp(0.0, 1.0);
                    let name = series.get(b).copied().unwrap_or("");
                    let _ = write!(
                        out,
                        r#"<rect x="{left}" y="{y}" width="{w:.1}" height="{}" fill="{}"><title>{} {}: {:.1}%</title></rect>"#,
                        bar_h - 2.0,
                        colour(b),
                        esc(&group.label),
                        esc(name),
                        value * 100.0
                    );
                    let _ = write!(
                        out,
                        r#"<text x="{}" y="{}" {}>{:.1}%</text>"#,
                        left + plot_w + 6.0,
                        y + bar_h - 4.0,
                        data_attrs(ptr, Fmt::Pct(1)),
                        value * 100.0
                    );
                }
                None => {
                    let _ = write!(out, r#"<text x="{}" y="{}" class="label">n/a</text>"#, left + plot_w + 6.0, y + bar_h - 4.0);
                }
            }
        }
    }
    out.push_str("</svg>");
    out
}
