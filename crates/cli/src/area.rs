//! `tessera area`: a design's predicted area, peak power and cost, component by component
//! (tessera_sim::area), next to the copied component table labelled as an input.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use tessera_sim::arch::Arch;
use tessera_sim::SimError;

/// Arguments of `tessera area`.
#[derive(clap::Args)]
pub struct AreaArgs {
    /// A built-in machine (ark, reed, cifher, h3, cofhee, ...) or a TOML description.
    #[arg(long, required_unless_present = "targets")]
    pub arch: Option<String>,
    /// Instead of one design: every calibrated design's prediction against its paper's
    /// published totals (configs/targets/area.toml), with the component errors.
    #[arg(long, conflicts_with_all = ["arch", "sets"])]
    pub targets: bool,
    /// Override a value of the description (KEY=VALUE, dotted path; repeatable).
    #[arg(long = "set")]
    pub sets: Vec<String>,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Prints the breakdown.
pub fn run(a: &AreaArgs) -> Result<(), SimError> {
    if a.targets {
        return targets(a.json);
    }
    let name = a.arch.as_deref().ok_or_else(|| SimError::Invalid {
        name: "--arch",
        value: String::new(),
        allowed: "a built-in machine or a TOML description (or --targets)".into(),
    })?;
    let arch = Arch::load_with(name, &a.sets)?;
    let p = tessera_sim::area::predict_arch(&arch)?;
    let input = match &arch {
        Arch::Vector(m) => tessera_sim::report::area_power(m).0,
        Arch::Pe(m) => m.area_mm2(),
    };
    if a.json {
        let mut v = serde_json::to_value(&p).map_err(|e| SimError::Trace(e.to_string()))?;
        v["input_area_mm2"] = serde_json::json!(input);
        v["input_label"] = serde_json::json!(tessera_sim::area::INPUT_LABEL);
        json_line(Schema::Area, &v);
        return Ok(());
    }
    emit(&format!(
        "{} at {} nm: predicted {:.1} mm2, peak {:.1} W ({})",
        p.arch, p.node_nm, p.total_area_mm2, p.total_peak_w, p.basis
    ));
    let rows: Vec<Vec<String>> = p
        .components
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                format!("{:.3}", c.area_mm2),
                c.peak_w.map_or("-".into(), |w| format!("{w:.2}")),
                c.basis.clone(),
            ]
        })
        .collect();
    table(&["component", "mm2", "peak W", "basis"], &rows);
    for n in &p.not_modelled {
        emit(&format!("not modelled: {} ({})", n.name, n.reason));
    }
    if let Some(c) = &p.package {
        emit(&format!(
            "package: {} die(s) of {:.1} mm2, die yield {:.1} %, ${:.0} per good package",
            c.dies,
            c.die_area_mm2,
            c.die_yield * 100.0,
            c.cost_per_good_package_usd
        ));
    }
    emit(&format!(
        "{}: {input:.1} mm2 (the description's component table)",
        tessera_sim::area::INPUT_LABEL
    ));
    Ok(())
}

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}"))
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// Prints every target row (and its components).
fn targets(json: bool) -> Result<(), SimError> {
    let rows = tessera_sim::area::targets::comparisons()?;
    if json {
        for r in &rows {
            json_line(
                Schema::AreaTargets,
                &serde_json::to_value(r).map_err(|e| SimError::Trace(e.to_string()))?,
            );
        }
        return Ok(());
    }
    let band = tessera_sim::area::targets::BAND * 100.0;
    let summary: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.arch.clone(),
                format!("{}", r.node_nm),
                format!("{:.1}", r.predicted_mm2),
                format!("{:.1}", r.paper_mm2),
                format!("{:.2}", r.ratio),
                if r.hit { "hit".into() } else { "miss".into() },
                opt(r.predicted_w),
                opt(r.paper_w),
                ratio(r.power_ratio),
            ]
        })
        .collect();
    emit(&format!(
        "predicted area vs the papers' totals (hit: within +-{band:.0} %)"
    ));
    table(
        &[
            "design",
            "nm",
            "pred mm2",
            "paper mm2",
            "ratio",
            "",
            "pred W",
            "paper W",
            "ratio",
        ],
        &summary,
    );
    for r in rows.iter().filter(|r| !r.components.is_empty()) {
        emit("");
        emit(&format!("{} ({})", r.arch, r.cite));
        let comp: Vec<Vec<String>> = r
            .components
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    format!("{:.2}", c.paper_mm2),
                    c.predicted_mm2
                        .map_or("not modelled".into(), |v| format!("{v:.2}")),
                    ratio(c.ratio),
                    opt(c.paper_w),
                    opt(c.predicted_w),
                ]
            })
            .collect();
        table(
            &[
                "component",
                "paper mm2",
                "pred mm2",
                "ratio",
                "paper W",
                "pred W",
            ],
            &comp,
        );
    }
    Ok(())
}
