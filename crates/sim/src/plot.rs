//! Minimal SVG line plots (no plotting dependency): what `--plot` and `tessera sweep` draw.

/// One line: a name and its (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// Axes and labels of a plot.
#[derive(Clone, Debug, Default)]
pub struct Axes<'a> {
    /// Figure title.
    pub title: &'a str,
    /// x-axis label.
    pub x_label: &'a str,
    /// y-axis label.
    pub y_label: &'a str,
    /// Fixed y range (e.g. 0..1 for utilization); `None`: from the data, starting at 0
    /// (on a log axis: the decades around the data).
    pub y_range: Option<(f64, f64)>,
    /// Format of a y tick value.
    pub y_percent: bool,
    /// Logarithmic x axis (for values spread over decades, such as memory sizes); ignored
    /// when some x is not positive.
    pub x_log: bool,
    /// Logarithmic y axis; ignored when some y is not positive.
    pub y_log: bool,
    /// Ticks at these x values with these labels (e.g. one per swept value, or categories
    /// placed at 0, 1, 2, ...); `None`: five evenly spaced numeric ticks.
    pub x_ticks: Option<Vec<(f64, String)>>,
}

/// `log10` on a log axis, the value itself on a linear one.
fn scale(log: bool, v: f64) -> f64 {
    if log {
        v.log10()
    } else {
        v
    }
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// A tick label: up to four decimals, scientific from 1000 on and below 0.001.
fn number(v: f64) -> String {
    if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.001) {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An SVG document plotting `series` on `axes` (points marked, lines joined).
pub fn line_plot(axes: &Axes<'_>, series: &[Series]) -> String {
    let (w, h, left, top, pw, ph) = (960.0, 440.0, 80.0, 40.0, 660.0, 320.0);
    let all = || series.iter().flat_map(|s| s.1.iter().copied());
    let x_log = axes.x_log && all().all(|p| p.0 > 0.0);
    let y_log = axes.y_log && axes.y_range.is_none() && all().all(|p| p.1 > 0.0);
    let (x0, x1) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        let x = scale(x_log, p.0);
        (a.min(x), b.max(x))
    });
    let (x0, x1) = if x0.is_finite() && x1 > x0 {
        // A margin, so points on the edges and their ticks stay inside the frame.
        let m = (x1 - x0) * 0.04;
        (x0 - m, x1 + m)
    } else if x0.is_finite() {
        (x0 - 1.0, x0 + 1.0)
    } else {
        (0.0, 1.0)
    };
    let (y0, y1) = match axes.y_range {
        Some(r) => r,
        None if y_log => {
            let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.1.log10()), b.max(p.1.log10()))
            });
            let (lo, hi) = (lo.floor(), hi.ceil());
            (lo, if hi > lo { hi } else { lo + 1.0 })
        }
        None => {
            let top = all().map(|p| p.1).fold(0.0f64, f64::max);
            (0.0, if top > 0.0 { top * 1.05 } else { 1.0 })
        }
    };
    let px = |x: f64| left + pw * (scale(x_log, x) - x0) / (x1 - x0);
    let py = |y: f64| top + ph * (1.0 - (scale(y_log, y) - y0) / (y1 - y0));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"22\" font-size=\"14\">{}</text>\n",
        xml(axes.title)
    );
    // y ticks: every decade on a log axis, five evenly spaced values otherwise.
    let y_ticks: Vec<f64> = if y_log {
        (y0 as i32..=y1 as i32).map(|k| 10f64.powi(k)).collect()
    } else {
        (0..=4).map(|t| y0 + (y1 - y0) * t as f64 / 4.0).collect()
    };
    for v in y_ticks {
        let label = if axes.y_percent {
            format!("{:.0}%", v * 100.0)
        } else if y_log {
            number(v)
        } else {
            format!("{v:.3}")
        };
        svg += &format!(
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
            left + pw,
            left - 6.0,
            py(v) + 4.0,
            y = py(v)
        );
    }
    let x_ticks: Vec<(f64, String)> = match &axes.x_ticks {
        Some(t) => t.clone(),
        None => (0..=4)
            .map(|t| {
                let u = x0 + (x1 - x0) * t as f64 / 4.0;
                let v = if x_log { 10f64.powf(u) } else { u };
                (v, number(v))
            })
            .collect(),
    };
    for (v, label) in x_ticks {
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            px(v),
            top + ph + 16.0,
            xml(&label)
        );
    }
    svg += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
         <text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">{}</text>\n",
        left + pw / 2.0,
        top + ph + 36.0,
        xml(axes.x_label),
        top + ph / 2.0,
        top + ph / 2.0,
        xml(axes.y_label)
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
            .collect();
        svg += &format!(
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
            path.join(" ")
        );
        if pts.len() <= 64 {
            for p in pts {
                svg += &format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>\n",
                    px(p.0),
                    py(p.1)
                );
            }
        }
        svg += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{c}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            left + pw + 20.0,
            top + 20.0 * i as f64,
            left + pw + 38.0,
            top + 20.0 * i as f64 + 10.0,
            xml(name)
        );
    }
    svg + "</svg>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(svg: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.contains("text-anchor=\"end\""))
            .filter_map(|l| l.rsplit("\">").next()?.strip_suffix("</text>"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_log_axis_ticks_every_decade_and_needs_positive_values() {
        let s: Vec<Series> = vec![("t".into(), vec![(1.0, 2.0), (4.0, 30.0), (16.0, 700.0)])];
        let log = Axes {
            y_log: true,
            x_log: true,
            ..Default::default()
        };
        let svg = line_plot(&log, &s);
        assert_eq!(ticks(&svg), ["1", "10", "100", "1.000e3"]);
        assert_eq!(
            [number(0.0), number(2.5), number(1e-5)],
            ["0", "2.5", "1.000e-5"]
        );
        // On a log x axis from 1 to 16, 4 sits halfway.
        let xs: Vec<f64> = svg
            .lines()
            .filter(|l| l.starts_with("<circle"))
            .map(|l| l.split('"').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(((xs[1] - xs[0]) - (xs[2] - xs[1])).abs() < 0.2, "{xs:?}");
        // A zero cannot go on a log axis: linear, from 0.
        let z: Vec<Series> = vec![("t".into(), vec![(1.0, 0.0), (2.0, 10.0)])];
        assert_eq!(ticks(&line_plot(&log, &z))[0], "0.000");
    }
}
