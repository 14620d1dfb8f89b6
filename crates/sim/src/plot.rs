//! Minimal SVG line plots (no plotting dependency): what `--plot` and `tessera sweep` draw.

/// One line: a name and its (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// Axes and labels of a plot.
#[derive(Clone, Debug)]
pub struct Axes<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Fixed y range (e.g. 0..1 for utilization); `None`: from the data, starting at 0.
    pub y_range: Option<(f64, f64)>,
    /// Format of a y tick value.
    pub y_percent: bool,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An SVG document plotting `series` on `axes` (points marked, lines joined).
pub fn line_plot(axes: &Axes<'_>, series: &[Series]) -> String {
    let (w, h, left, top, pw, ph) = (960.0, 440.0, 80.0, 40.0, 660.0, 320.0);
    let xs = series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (x0, x1) = if x0.is_finite() && x1 > x0 {
        (x0, x1)
    } else {
        (x0.min(0.0), x0.max(0.0) + 1.0)
    };
    let (y0, y1) = axes.y_range.unwrap_or_else(|| {
        let top = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(0.0f64, f64::max);
        (0.0, if top > 0.0 { top * 1.05 } else { 1.0 })
    });
    let px = |x: f64| left + pw * (x - x0) / (x1 - x0);
    let py = |y: f64| top + ph * (1.0 - (y - y0) / (y1 - y0));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"22\" font-size=\"14\">{}</text>\n",
        xml(axes.title)
    );
    for t in 0..=4 {
        let v = y0 + (y1 - y0) * t as f64 / 4.0;
        let label = if axes.y_percent {
            format!("{:.0}%", v * 100.0)
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
    for t in 0..=4 {
        let v = x0 + (x1 - x0) * t as f64 / 4.0;
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            px(v),
            top + ph + 16.0,
            if v.abs() >= 1000.0 {
                format!("{v:.3e}")
            } else {
                format!("{v:.4}")
            }
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
