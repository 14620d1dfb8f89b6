//! The simulator's input limits, in one place: the range rules every numeric field of a
//! machine description is checked with ([`crate::machine::Machine::validate`],
//! [`crate::cofhee::PeMachine::validate`], [`crate::cost::CostModel::validate`]: files,
//! `extends` chains and `--set` values all pass through them), the bounds that keep the
//! simulator's memory within a host's (clusters, sweep grids, input file sizes), and the
//! lookup that turns a field's dotted path into the line of the file it was written on.
//!
//! Why bounds and not just "positive": a value the simulator accepts must give a report
//! whose every number is finite and whose integer arithmetic cannot wrap. The upper bounds
//! are orders of magnitude above any design in `configs/` (see docs/simulator.md, "Input
//! validation and limits").
//!
//! ```
//! use tessera_sim::limits::{fraction, positive};
//! assert!(positive("clock.ghz", 1.0, 1e3).is_ok());
//! assert!(positive("clock.ghz", f64::NAN, 1e3).is_err());
//! let e = fraction("cost.bond_yield", 2.0).unwrap_err().to_string();
//! assert!(e.contains("cost.bond_yield") && e.contains("(0, 1]"));
//! ```

use crate::error::SimError;

/// Most clusters (cores, chiplets) a machine may have: 16 times the largest shipped design
/// (CiFHER's 64 cores). The engine keeps a handful of resources per cluster, and H3's
/// scheduled broadcast a `k x k` table, so memory stays small (10^12 clusters aborted the
/// process); setting up the NoC's collectives takes time growing as `k^2` to `k^3` on rings
/// and scheduled meshes (HMult at `test-small` with 1024 clusters: 10 s on REED's ring, 33 s
/// on H3's mesh, under 1 s on CiFHER's).
pub const MAX_CLUSTERS: u64 = 1024;
/// Most functional units of one class per cluster, SRAMs, memory stacks.
pub const MAX_UNITS: u64 = 1 << 16;
/// Most lanes, elements per cycle or MACs per lane of one unit.
pub const MAX_WIDTH: u64 = 1 << 20;
/// Longest fixed latency or pipeline depth, in cycles (2^32: seconds at any clock).
pub const MAX_LATENCY_CYCLES: u64 = 1 << 32;
/// Largest clock, in GHz.
pub const MAX_GHZ: f64 = 1e3;
/// Largest bandwidth, in GB/s (tests model an unbounded port with 10^12).
pub const MAX_GBS: f64 = 1e15;
/// Largest memory capacity, in MB.
pub const MAX_MB: f64 = 1e15;
/// Longest access latency, in ns (one second).
pub const MAX_LATENCY_NS: f64 = 1e9;
/// Largest energy per bit, in pJ (a microjoule).
pub const MAX_PJ_PER_BIT: f64 = 1e6;
/// Largest area (mm^2), power (W), count or cost of one line of a description.
pub const MAX_QUANTITY: f64 = 1e12;
/// Most points of a sweep grid (each is a full simulation; their reports stay in memory).
pub const MAX_SWEEP_POINTS: u64 = 10_000;
/// Largest machine-description file, in bytes (the largest shipped one is under 10 kB).
pub const MAX_DESCRIPTION_BYTES: u64 = 16 << 20;

fn out_of_range(name: &str, value: String, allowed: String) -> SimError {
    SimError::Field {
        origin: String::new(),
        line: None,
        name: name.to_string(),
        value,
        allowed,
    }
}

/// `v` finite and in `(0, max]`.
pub fn positive(name: &str, v: f64, max: f64) -> Result<(), SimError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(())
    } else {
        Err(out_of_range(
            name,
            v.to_string(),
            format!("a finite number in (0, {max:e}]"),
        ))
    }
}

/// `v` finite and in `[0, max]`.
pub fn non_negative(name: &str, v: f64, max: f64) -> Result<(), SimError> {
    if v.is_finite() && (0.0..=max).contains(&v) {
        Ok(())
    } else {
        Err(out_of_range(
            name,
            v.to_string(),
            format!("a finite number in [0, {max:e}]"),
        ))
    }
}

/// `v` finite and in `[lo, hi]`.
pub fn between(name: &str, v: f64, lo: f64, hi: f64) -> Result<(), SimError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(out_of_range(
            name,
            v.to_string(),
            format!("a finite number in [{lo}, {hi}]"),
        ))
    }
}

/// A probability of success: `v` in `(0, 1]`.
pub fn fraction(name: &str, v: f64) -> Result<(), SimError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(out_of_range(
            name,
            v.to_string(),
            "a probability in (0, 1]".into(),
        ))
    }
}

/// An integer in `[lo, hi]`.
pub fn count(
    name: &str,
    v: impl TryInto<u64> + Copy + ToString,
    lo: u64,
    hi: u64,
) -> Result<(), SimError> {
    match v.try_into() {
        Ok(x) if (lo..=hi).contains(&x) => Ok(()),
        _ => Err(out_of_range(
            name,
            v.to_string(),
            format!("an integer from {lo} to {hi}"),
        )),
    }
}

/// The number of points of a grid with axes of `sizes` values, checked against
/// [`MAX_SWEEP_POINTS`] before anything is allocated.
pub fn grid_points(sizes: impl IntoIterator<Item = usize>) -> Result<usize, SimError> {
    let mut total: u64 = 1;
    for s in sizes {
        total = total.saturating_mul(s as u64);
    }
    if total > MAX_SWEEP_POINTS {
        return Err(SimError::Invalid {
            name: "--set (sweep grid)",
            value: format!("{total} points"),
            allowed: format!("at most {MAX_SWEEP_POINTS} points (the product of the value counts)"),
        });
    }
    Ok(total as usize)
}

/// Reads the regular file at `path`, refusing anything else (a FIFO would block, a device
/// such as `/dev/zero` never end) and files over `max` bytes. `what` names the input.
pub fn read_regular_file(path: &std::path::Path, what: &str, max: u64) -> Result<String, SimError> {
    use std::io::Read;
    let io = |message: String| SimError::Io {
        path: path.display().to_string(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io(format!(
            "{what} must be a regular file (not a directory, FIFO or device)"
        )));
    }
    if meta.len() > max {
        return Err(io(format!(
            "{what} of {} bytes; allowed at most {max} bytes",
            meta.len()
        )));
    }
    let f = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    let mut text = String::new();
    // The file may grow between the check and the read: never read more than the limit.
    f.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| io(e.to_string()))?;
    if text.len() as u64 > max {
        return Err(io(format!("{what} over {max} bytes")));
    }
    Ok(text)
}

/// The line of `text` (a TOML description) on which the field at dotted path `name` is
/// written: `memory.offchip.latency_ns`, or `component[NAME].area_mm2` for an entry of the
/// `[[component]]` list. `None` when the file does not write it (it comes from the
/// description it extends, or from a default).
pub fn line_of(text: &str, name: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    // `component[NAME].field` names a list entry by its name; the name may contain dots.
    let (list, rest) = match name.split_once('[') {
        Some((list, rest)) if !list.contains('.') => {
            let (entry, field) = rest.rsplit_once("].")?;
            (Some((list, entry)), field)
        }
        _ => (None, name),
    };
    let mut table: &DeTable = doc.get_ref();
    fn find<'i>(
        t: &DeTable<'i>,
        k: &str,
    ) -> Option<(std::ops::Range<usize>, toml::Spanned<DeValue<'i>>)> {
        t.iter()
            .find(|(key, _)| key.get_ref().as_ref() == k)
            .map(|(key, v)| (key.span(), v.clone()))
    }
    let mut owned;
    if let Some((list, entry)) = list {
        let (_, v) = find(table, list)?;
        let DeValue::Array(items) = v.into_inner() else {
            return None;
        };
        owned = items.into_iter().find_map(|item| match item.into_inner() {
            DeValue::Table(t) => {
                let named = t.iter().any(|(k, v)| {
                    k.get_ref().as_ref() == "name"
                        && matches!(v.get_ref(), DeValue::String(s) if s.as_ref() == entry)
                });
                named.then_some(t)
            }
            _ => None,
        })?;
        table = &owned;
    }
    let parts: Vec<&str> = rest.split('.').collect();
    let (last, path) = parts.split_last()?;
    for p in path {
        let (_, v) = find(table, p)?;
        let DeValue::Table(t) = v.into_inner() else {
            return None;
        };
        owned = t;
        table = &owned;
    }
    let (span, _) = find(table, last)?;
    Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
}

/// `e` with its origin and, if `text` writes the field, its line filled in.
pub fn locate(e: SimError, origin: &str, text: Option<&str>) -> SimError {
    match e {
        SimError::Field {
            origin: o,
            line,
            name,
            value,
            allowed,
        } if o.is_empty() => SimError::Field {
            line: line.or_else(|| text.and_then(|t| line_of(t, &name))),
            origin: origin.to_string(),
            name,
            value,
            allowed,
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_for_tables_dotted_keys_and_named_list_entries() {
        let text = "name = \"x\"\n[memory.offchip]\nbandwidth_gbs = 1.0\nlatency_ns = -3.0\n\n[[component]]\nname = \"a.b\"\narea_mm2 = 1.0\n[[component]]\nname = \"c\"\narea_mm2 = -1.0\n";
        assert_eq!(line_of(text, "memory.offchip.latency_ns"), Some(4));
        assert_eq!(line_of(text, "component[c].area_mm2"), Some(11));
        assert_eq!(line_of(text, "component[a.b].area_mm2"), Some(8));
        assert_eq!(line_of(text, "memory.noc.latency_ns"), None);
        assert_eq!(line_of(text, "component[z].area_mm2"), None);
        assert_eq!(line_of("not toml [", "a"), None);
    }

    #[test]
    fn ranges_accept_their_bounds_and_refuse_the_rest() {
        assert!(positive("x", 1e3, 1e3).is_ok());
        assert!(positive("x", 0.0, 1e3).is_err());
        assert!(positive("x", f64::INFINITY, f64::INFINITY).is_err());
        assert!(non_negative("x", 0.0, 1.0).is_ok());
        assert!(non_negative("x", -0.5, 1.0).is_err());
        assert!(non_negative("x", f64::NAN, 1.0).is_err());
        assert!(fraction("x", 1.0).is_ok());
        assert!(fraction("x", f64::NAN).is_err());
        assert!(count("x", 4096usize, 1, 4096).is_ok());
        assert!(count("x", 4097usize, 1, 4096).is_err());
        assert!(count("x", 0u32, 1, 4096).is_err());
        assert_eq!(grid_points([3, 4]).unwrap(), 12);
        assert!(grid_points([usize::MAX, usize::MAX]).is_err());
        assert!(grid_points([100, 101]).is_err());
    }
}
