//! `tessera reproduce`: every calibration target of the papers, model next to paper, with the
//! ratio, hits and misses alike.

use crate::output::{json_line, table};
use serde_json::json;
use tessera_sim::{reproduce, SimError};

pub fn run(paper: Option<&str>, json: bool) -> Result<(), SimError> {
    let rows = reproduce::targets(paper, &|msg| eprintln!("{msg}..."))?;
    if json {
        for r in &rows {
            json_line(&json!({
                "paper": r.paper, "item": r.item, "unit": r.unit,
                "paper_value": r.paper_value, "model_value": r.model_value, "ratio": r.ratio,
                "tolerance": r.tolerance, "hit": r.hit, "source": r.source,
            }));
        }
        return Ok(());
    }
    let fmt = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_else(|| "-".into());
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.paper.clone(),
                r.item.clone(),
                r.unit.clone(),
                fmt(r.paper_value),
                fmt(r.model_value),
                fmt(r.ratio),
                match (r.hit, r.tolerance) {
                    (Some(true), Some((lo, hi))) => format!("hit [{lo}, {hi}]"),
                    (Some(false), Some((lo, hi))) if r.model_value.is_none() => {
                        format!("MISS (not modelled) [{lo}, {hi}]")
                    }
                    (Some(false), Some((lo, hi))) => format!("MISS [{lo}, {hi}]"),
                    _ => "(reported)".into(),
                },
                r.source.clone(),
            ]
        })
        .collect();
    table(
        &[
            "paper", "item", "unit", "paper", "model", "ratio", "target", "source",
        ],
        &table_rows,
    );
    Ok(())
}
