//! `tessera plan`: the key-switching decomposition at every level, fixed (the set's `dnum`)
//! against per-level dynamic (h3.md section 3.1), with the cost model's figures, so an
//! architect can see what dynamic adaptation buys on a parameter set before running it.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use serde_json::json;
use tessera_ckks::{CkksError, KeySwitchPlan, Parameters};

pub fn run(params: &str, json: bool, plot: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let p = Parameters::resolve(params)?;
    let fixed = KeySwitchPlan::fixed(&p);
    let mut rows = Vec::new();
    let (mut total_fixed, mut total_dyn) = (0.0, 0.0);
    // (name, cost per level, key MB per level) for the plot.
    let mut series: [PerLevel; 3] = [
        ("schoolbook: one limb per digit", Vec::new(), Vec::new()),
        ("fixed dnum", Vec::new(), Vec::new()),
        ("dynamic (h3.md Alg. 2)", Vec::new(), Vec::new()),
    ];
    for level in (0..=p.max_level()).rev() {
        let d = KeySwitchPlan::dynamic(&p, level)?;
        let (cf, cd) = (fixed.cost(&p, level), d.cost(&p, level));
        total_fixed += cf;
        total_dyn += cd;
        // Key words at this level: fixed keys are used truncated (beta digits over l+1+K).
        let key_mb = |plan: &KeySwitchPlan| {
            (plan.beta(level) * (level + 1 + plan.special.len()) * p.n() * 8) as f64 / 1e6
        };
        let school = schoolbook(&p, level)?;
        let x = level as f64;
        for (s, plan) in series
            .iter_mut()
            .zip([school.as_ref(), Some(&fixed), Some(&d)])
        {
            if let Some(plan) = plan {
                s.1.push((x, plan.cost(&p, level)));
                s.2.push((x, key_mb(plan)));
            }
        }
        if json {
            json_line(
                Schema::Plan,
                &json!({
                    "params": params, "level": level,
                    "fixed": {"alpha": fixed.alpha(), "beta": fixed.beta(level), "k": fixed.special.len(),
                              "log_qp": fixed.log_qp_bits(&p, level), "cost": cf, "key_mb": key_mb(&fixed)},
                    "dynamic": {"alpha": d.alpha(), "beta": d.beta(level), "k": d.special.len(),
                                "log_qp": d.log_qp_bits(&p, level), "cost": cd, "key_mb": key_mb(&d)},
                    "saving": 1.0 - cd / cf,
                }),
            );
        } else {
            rows.push(vec![
                level.to_string(),
                format!(
                    "{}/{}/{}",
                    fixed.alpha(),
                    fixed.beta(level),
                    fixed.special.len()
                ),
                format!("{}/{}/{}", d.alpha(), d.beta(level), d.special.len()),
                format!("{:.0}", d.log_qp_bits(&p, level)),
                format!("{cf:.0}"),
                format!("{cd:.0}"),
                format!("{:.1}", 100.0 * (1.0 - cd / cf)),
                format!("{:.1}/{:.1}", key_mb(&fixed), key_mb(&d)),
            ]);
        }
    }
    if !json {
        emit(&format!(
            "key-switching decomposition per level at '{params}' (N = {}, L = {}, budget log2(QP) <= {:.0})",
            p.n(),
            p.max_level(),
            p.key_modulus_budget_bits()
        ));
        emit("cost = modular multiplications per coefficient (NTT limb = log2(N)/2; BConv MAC and element-wise product = 1)");
        table(
            &[
                "level",
                "fixed a/b/K",
                "dynamic a/b/K",
                "dyn log2QP",
                "fixed cost",
                "dyn cost",
                "saving %",
                "key MB fixed/dyn",
            ],
            &rows,
        );
        emit(&format!(
            "summed over levels: fixed {total_fixed:.0}, dynamic {total_dyn:.0} ({:.1} % less)",
            100.0 * (1.0 - total_dyn / total_fixed)
        ));
    }
    if let Some(prefix) = plot {
        use tessera_sim::plot::{line_plot, Axes, Series};
        let title_cost = format!("key-switch cost per level at '{params}'");
        let title_keys = format!("key size per level at '{params}' (b halves, 8-byte words)");
        for (suffix, title, y_label, pick) in [
            ("cost", &title_cost, "modular mults per coefficient", 0),
            ("keys", &title_keys, "MB", 1),
        ] {
            let lines: Vec<Series> = series
                .iter()
                .map(|(name, cost, keys)| {
                    let pts = if pick == 0 { cost } else { keys };
                    (name.to_string(), pts.iter().rev().copied().collect())
                })
                .filter(|(_, pts): &Series| !pts.is_empty())
                .collect();
            let svg = line_plot(
                &Axes {
                    title,
                    x_label: "level",
                    y_label,
                    ..Default::default()
                },
                &lines,
            );
            let path = format!("{prefix}-{suffix}.svg");
            std::fs::write(&path, svg).map_err(|e| format!("--plot: writing {path}: {e}"))?;
            eprintln!("wrote {path}");
        }
    }
    Ok(())
}

/// A decomposition's name, its cost per level and its key MB per level: (level, value) points.
type PerLevel = (&'static str, Vec<(f64, f64)>, Vec<(f64, f64)>);

/// The schoolbook decomposition at `level` (h3.md Fig. 1 and Fig. 9's baseline): one limb
/// per digit and the fewest special primes that cover one, when the set's key-modulus budget
/// allows it (`None` otherwise).
fn schoolbook(p: &Parameters, level: usize) -> Result<Option<KeySwitchPlan>, CkksError> {
    Ok(KeySwitchPlan::candidates(p, level)?
        .into_iter()
        .map(|(plan, _)| plan)
        .find(|plan| plan.alpha() == 1))
}
