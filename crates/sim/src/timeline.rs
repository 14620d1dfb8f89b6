//! Views of a schedule people can look at: a Chrome-trace / Perfetto JSON timeline (one track
//! per resource, HE operations on their own tracks) and an SVG plot of utilization over time.

use crate::engine::Schedule;
use crate::error::SimError;
use crate::machine::Machine;
use crate::mapping::{Layout, Resource};
use serde_json::json;
use std::io::Write;

fn io(path: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Io {
        path: path.to_string(),
        message: e.to_string(),
    }
}

fn track_name(r: Resource) -> String {
    match r {
        Resource::Ntt(c) => format!("cluster {c} NTTU"),
        Resource::Bconv(c) => format!("cluster {c} BConvU"),
        Resource::Auto(c) => format!("cluster {c} AutoU"),
        Resource::Madu(c) => format!("cluster {c} MADUs"),
        Resource::Prng(c) => format!("cluster {c} PRNG"),
        Resource::Scratchpad(c) => format!("cluster {c} scratchpad port"),
        Resource::Noc(i) => format!("NoC / link {i}"),
        Resource::Offchip(c) => format!("off-chip channel {c}"),
    }
}

/// Writes the schedule (run with `keep_slots`) as Chrome-trace JSON: timestamps in
/// microseconds of machine time.
pub fn write_chrome_trace(m: &Machine, s: &Schedule, path: &str) -> Result<(), SimError> {
    let lay = Layout::of(m);
    let us = 1.0 / (m.clock.ghz * 1e3);
    let f = std::fs::File::create(path).map_err(|e| io(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    let mut first = true;
    let mut put = |w: &mut std::io::BufWriter<std::fs::File>, v: serde_json::Value| {
        let sep = if first { "" } else { ",\n" };
        first = false;
        write!(w, "{sep}{v}")
    };
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[").map_err(|e| io(path, e))?;
    put(
        &mut w,
        json!({"name":"process_name","ph":"M","pid":0,"args":{"name":"HE operations"}}),
    )
    .map_err(|e| io(path, e))?;
    put(
        &mut w,
        json!({"name":"process_name","ph":"M","pid":1,"args":{"name":m.name}}),
    )
    .map_err(|e| io(path, e))?;
    for r in Resource::all(&lay) {
        put(
            &mut w,
            json!({"name":"thread_name","ph":"M","pid":1,"tid":r.index(&lay),"args":{"name":track_name(r)}}),
        )
        .map_err(|e| io(path, e))?;
    }
    for sp in &s.spans {
        put(
            &mut w,
            json!({"name":sp.name,"ph":"X","pid":0,"tid":sp.depth,"ts":sp.start*us,
                   "dur":(sp.end-sp.start)*us,"args":{"level":sp.level}}),
        )
        .map_err(|e| io(path, e))?;
    }
    for sl in &s.slots {
        for &(r, t0, c) in &sl.busy {
            if c <= 0.0 {
                continue;
            }
            put(
                &mut w,
                json!({"name":sl.op,"ph":"X","pid":1,"tid":r.index(&lay),"ts":t0*us,"dur":c*us,
                       "args":{"seq":sl.seq}}),
            )
            .map_err(|e| io(path, e))?;
        }
    }
    write!(w, "\n]}}\n").map_err(|e| io(path, e))?;
    w.flush().map_err(|e| io(path, e))
}

/// Busy fraction per unit class in `bins` equal time bins.
pub fn utilization_series(m: &Machine, s: &Schedule, bins: usize) -> Vec<(&'static str, Vec<f64>)> {
    let k = m.chip.clusters;
    let lay = Layout::of(m);
    let classes = [
        "ntt",
        "bconv",
        "auto",
        "madu",
        "scratchpad",
        "noc",
        "offchip",
    ];
    let width = (s.cycles / bins as f64).max(1e-9);
    let mut out: Vec<(&'static str, Vec<f64>)> =
        classes.iter().map(|c| (*c, vec![0.0; bins])).collect();
    for sl in &s.slots {
        for &(r, t0, c) in &sl.busy {
            let Some(series) = out.iter_mut().find(|(n, _)| *n == r.class()) else {
                continue;
            };
            let instances = match r {
                Resource::Noc(_) => lay.links as f64,
                Resource::Offchip(_) => lay.channels as f64,
                _ => k as f64,
            };
            let (mut a, b) = (t0, t0 + c);
            while a < b {
                let bin = ((a / width) as usize).min(bins - 1);
                let edge = ((bin + 1) as f64 * width).min(b).max(a + 1e-9);
                series.1[bin] += (edge - a) / width / instances;
                a = edge;
            }
        }
    }
    for (_, v) in out.iter_mut() {
        for x in v.iter_mut() {
            *x = x.min(1.0);
        }
    }
    out
}

/// Writes an SVG line plot of utilization over time (one line per unit class).
pub fn write_utilization_svg(
    m: &Machine,
    s: &Schedule,
    title: &str,
    path: &str,
) -> Result<(), SimError> {
    let bins = 200;
    let width = s.cycles / bins as f64;
    let series: Vec<crate::plot::Series> = utilization_series(m, s, bins)
        .into_iter()
        .map(|(name, v)| {
            let pts = v
                .iter()
                .enumerate()
                .map(|(b, u)| ((b as f64 + 0.5) * width / (m.clock.ghz * 1e3), *u))
                .collect();
            (name.to_string(), pts)
        })
        .collect();
    let title = format!(
        "{title} on {}: utilization over {:.3} ms",
        m.name,
        s.cycles / (m.clock.ghz * 1e6)
    );
    let svg = crate::plot::line_plot(
        &crate::plot::Axes {
            title: &title,
            x_label: "time (us)",
            y_label: "busy fraction",
            y_range: Some((0.0, 1.0)),
            y_percent: true,
            ..Default::default()
        },
        &series,
    );
    std::fs::write(path, svg).map_err(|e| io(path, e))
}
