//! `tessera reproduce`: every calibration target of the papers, model next to paper, with the
//! ratio, hits and misses alike.

use crate::output::{json_line, table};
use crate::schema::Schema;
use serde_json::json;
use tessera_lab::{reproduce, LabError};

/// How `reproduce` prints its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Markdown,
}

/// Runs the targets of `paper` (all when `None`), the extended group too when `extended`.
pub fn run(paper: Option<&str>, extended: bool, format: Format) -> Result<(), LabError> {
    // What is being recorded, on a terminal only: quiet in --json mode and in pipes.
    let bar = if format == Format::Json || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new_spinner()
    };
    let rows = reproduce::targets_with(paper, extended, &|msg| {
        bar.set_message(format!("{msg}..."));
        bar.tick();
    })?;
    bar.finish_and_clear();
    if format == Format::Markdown {
        print!("{}", markdown(&rows));
        eprintln!("{}", tally(&rows));
        return Ok(());
    }
    if format == Format::Json {
        for r in &rows {
            json_line(
                Schema::Reproduce,
                &json!({
                    "paper": r.paper, "item": r.item, "unit": r.unit, "kind": r.kind,
                    "paper_value": r.paper_value, "model_value": r.model_value, "ratio": r.ratio,
                    "tolerance": r.tolerance, "hit": r.hit, "source": r.source,
                    "seconds": r.seconds,
                }),
            );
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
                kind_name(r.kind).into(),
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
            "paper", "item", "unit", "kind", "paper", "model", "ratio", "target", "source",
        ],
        &table_rows,
    );
    println!("{}", tally(&rows));
    Ok(())
}

/// "N targets: H hits, M misses, R reported (inputs: ...; predictions: ...)" (a row with a
/// band is a target; one without is reported).
fn tally(rows: &[reproduce::Target]) -> String {
    reproduce::Tally::of(rows).to_string()
}

/// "input" or "prediction".
fn kind_name(k: tessera_lab::targets::Kind) -> &'static str {
    match k {
        tessera_lab::targets::Kind::Input => "input",
        tessera_lab::targets::Kind::Prediction => "prediction",
    }
}

/// The Markdown table of docs/simulator.md: paper, item (unit), paper, model, ratio, target.
fn markdown(rows: &[reproduce::Target]) -> String {
    let num = |v: Option<f64>| match v {
        None => "-".to_string(),
        Some(x) if x.abs() >= 1000.0 => thousands(x),
        Some(x) => significant(x, 4),
    };
    let mut s = String::from(
        "| paper | item | paper | model | ratio | target |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let target = match (r.hit, r.tolerance) {
            (Some(true), Some((lo, hi))) => format!("hit ({lo}-{hi})"),
            (Some(false), Some((lo, hi))) if r.model_value.is_none() => {
                format!("**MISS** (not modelled) ({lo}-{hi})")
            }
            (Some(false), Some((lo, hi))) => format!("**MISS** ({lo}-{hi})"),
            _ => "reported".into(),
        };
        let target = format!("{target}, {}", kind_name(r.kind));
        s += &format!(
            "| {} | {} ({}) | {} | {} | {} | {target} |\n",
            paper_name(&r.paper),
            r.item,
            r.unit,
            num(r.paper_value),
            num(r.model_value),
            r.ratio.map(|x| format!("{x:.3}")).unwrap_or_default(),
        );
    }
    s
}

/// The paper's own spelling of its design.
fn paper_name(key: &str) -> &str {
    match key {
        "ark" => "ARK",
        "cofhee" => "CoFHEE",
        "reed" => "REED",
        "cifher" => "CiFHER",
        "h3" => "H3",
        other => other,
    }
}

/// `x` with `digits` significant digits, trailing zeros dropped (0.0050 -> 0.005).
fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `x` with one decimal and thousands separators (24841 -> 24,841.0).
fn thousands(x: f64) -> String {
    let s = format!("{:.1}", x.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, "0"));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{}{grouped}.{frac}", if x < 0.0 { "-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::{significant, thousands};

    #[test]
    fn numbers_read_like_the_docs_table() {
        assert_eq!(significant(0.005, 4), "0.005");
        assert_eq!(significant(28.3627, 4), "28.36");
        assert_eq!(significant(0.0979712, 4), "0.09797");
        assert_eq!(significant(418.2, 4), "418.2");
        assert_eq!(significant(14.2, 4), "14.2");
        assert_eq!(thousands(24841.0), "24,841.0");
        assert_eq!(thousands(3819.14), "3,819.1");
        assert_eq!(thousands(-1234567.0), "-1,234,567.0");
    }
}
