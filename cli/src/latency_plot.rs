//! The SVG for `barebell latency --svg`: histograms of total latency, one
//! linear over min..p99.9 and one with logarithmic bins and counts over
//! min..max (where the tail shows), and the CDF of every phase.

use barebell::latency::run::PHASES;
use barebell::latency::{Histogram, Summary};
use plotters::prelude::*;
use std::path::Path;

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(90, 90, 90),
];

pub fn write_svg(
    path: &Path,
    hists: &[Box<Histogram>],
    summaries: &[Summary],
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1650, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (left, rest) = root.split_horizontally(550);
    let (middle, right) = rest.split_horizontally(550);
    let total_h = hists.get(4).ok_or("no total histogram")?;
    let total = summaries.get(4).ok_or("no total summary")?;

    // Histogram of the total, linear bins from min to p99.9 (the tail past
    // it is reported in the table and the outlier list).
    let lo = total.min;
    let hi = total.p99_9.max(lo + 1);
    let bins = 60u64;
    let width = (hi - lo).div_ceil(bins).max(1);
    let mut counts = vec![0u64; bins as usize];
    for (b_lo, b_w, c) in total_h.buckets() {
        let mid = b_lo + b_w / 2;
        if mid >= lo && mid <= hi {
            let i = ((mid - lo) / width).min(bins - 1) as usize;
            counts[i] += c;
        }
    }
    let ymax = counts.iter().copied().max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(&left)
        .caption(
            "total latency per submission (min..p99.9)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(lo..hi + width, 0u64..ymax + ymax / 10)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("ns")
        .y_desc("iterations")
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(counts.iter().enumerate().map(|(i, &c)| {
            let x0 = lo + i as u64 * width;
            Rectangle::new([(x0, 0), (x0 + width, c)], COLORS[4].filled())
        }))
        .map_err(|e| e.to_string())?;

    draw_log_histogram(&middle, total_h, total.min, total.max)?;

    // CDF of each phase on a shared axis up to the largest p99.9.
    let xmax = summaries.iter().map(|s| s.p99_9).max().unwrap_or(1).max(1);
    let mut cdf = ChartBuilder::on(&right)
        .caption("CDF by phase (to the largest p99.9)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0u64..xmax, 0f64..1.0)
        .map_err(|e| e.to_string())?;
    cdf.configure_mesh()
        .x_desc("ns")
        .y_desc("fraction ≤ x")
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, h) in hists.iter().enumerate() {
        let n = h.count().max(1) as f64;
        let mut acc = 0u64;
        let pts: Vec<(u64, f64)> = h
            .buckets()
            .map(|(b_lo, b_w, c)| {
                acc += c;
                ((b_lo + b_w).min(xmax), acc as f64 / n)
            })
            .collect();
        let color = COLORS[k % COLORS.len()];
        cdf.draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(PHASES[k])
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    cdf.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

/// Logarithmic bins (equal ratios) from `min` to `max` on a log x axis,
/// counts on a log y axis: one outlier in a million still shows as a bar.
/// Each of the histogram's own buckets lands in the bin holding its
/// midpoint.
fn draw_log_histogram(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    h: &Histogram,
    min: u64,
    max: u64,
) -> Result<(), String> {
    let bins = 48usize;
    let lo = (min.max(1)) as f64;
    let hi = (max as f64).max(lo * 1.01);
    let ratio = (hi / lo).powf(1.0 / bins as f64);
    let mut counts = vec![0u64; bins];
    for (b_lo, b_w, c) in h.buckets() {
        let mid = (b_lo + b_w / 2).max(1) as f64;
        let i = ((mid / lo).ln() / ratio.ln()).floor();
        let i = if i.is_finite() {
            i.clamp(0.0, (bins - 1) as f64) as usize
        } else {
            0
        };
        if let Some(slot) = counts.get_mut(i) {
            *slot += c;
        }
    }
    let ymax = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "total latency, log bins and counts (min..max)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (lo..hi * ratio).log_scale(),
            (0.5f64..ymax * 2.0).log_scale(),
        )
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("ns (log)")
        .y_desc("iterations (log)")
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(
            counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, &c)| {
                    let x0 = lo * ratio.powi(i as i32);
                    Rectangle::new([(x0, 0.5), (x0 * ratio, c as f64)], COLORS[3].filled())
                }),
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}
