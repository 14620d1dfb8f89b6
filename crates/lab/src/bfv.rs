//! CoFHEE's BFV applications (`cryptonets`, `lr-inference`; cofhee.md V-C, Table X) on a
//! single-PE model: CoFHEE estimates them from op counts and per-op times, and so does this
//! module. [`tessera_bfv::record_blocks`] runs one op of each class of the program's op mix on
//! real ciphertexts (checked against the clear computation) and returns its command block; each
//! block is simulated on the PE machine and its report scaled by the class's count.
//!
//! The op mix is CoFHEE Table X's ([`tessera_programs::bfv_apps::cryptonets::TABLE_X`],
//! [`tessera_programs::bfv_apps::lr_inference::TABLE_X`]), not the op counts of our own
//! networks (our CryptoNets squares 945 values per image where Table X counts 10,200 ct x ct:
//! workloads.md 7). Count x per-op time is exact when ops do not overlap: CoFHEE has one PE
//! that runs one command at a time, and the host transfers of an op are charged as the model
//! charges them inside the block; any overlap of one op's host transfer with the next op's
//! commands (CoFHEE's third dual-port memory buffers the next polynomial, cofhee.md VIII-B) is
//! not credited, so the total is an upper bound in that respect.

use crate::error::Result;
use std::collections::BTreeMap;
use tessera_bfv::{record_blocks, BfvParams, OpMix};
use tessera_programs::bfv_apps::{cryptonets, lr_inference};
use tessera_sim::arch::Arch;
use tessera_sim::cofhee::{refill_s, PeMachine};
use tessera_sim::{Report, SimError};

/// The BFV programs this module simulates.
pub use tessera_programs::registry::BFV_PROGRAMS;

/// The `tessera-bfv` presets a program's op mix may also be recorded at.
pub const CIPHERTEXT_PRESETS: &[&str] = &["bfv-n12", "bfv-n13"];

/// Whether `name` is a BFV program (simulated here, not by the CKKS trace backend).
pub fn is_bfv_program(name: &str) -> bool {
    BFV_PROGRAMS.contains(&name)
}

/// CoFHEE Table X's op mix of `program`.
pub fn table_x(program: &str) -> Result<OpMix> {
    match program {
        "cryptonets" => Ok(cryptonets::TABLE_X),
        "lr-inference" => Ok(lr_inference::TABLE_X),
        _ => Err(invalid_program(program)),
    }
}

fn invalid_program(program: &str) -> crate::LabError {
    SimError::Invalid {
        name: "workload",
        value: program.into(),
        allowed: BFV_PROGRAMS.join(", "),
    }
    .into()
}

/// The BFV parameters `name` names for `program`: a `tessera-bfv` preset (`bfv-n12`: n = 2^12,
/// one 109-bit tower; `bfv-n13`: n = 2^13, two towers) or the program's own set
/// (`cryptonets-n13`, `lr-n13`: n = 2^13, two towers, its first plaintext modulus). The
/// commands of an op depend on n and the towers, not on the plaintext modulus.
pub fn parameters(program: &str, name: &str) -> Result<BfvParams> {
    if CIPHERTEXT_PRESETS.contains(&name) {
        return BfvParams::preset(name).map_err(|e| SimError::Unsupported(e.to_string()).into());
    }
    let sets = match program {
        "cryptonets" => cryptonets::parameters(name),
        "lr-inference" => lr_inference::parameters(name),
        _ => return Err(invalid_program(program)),
    };
    let allowed = format!(
        "{}, {}",
        CIPHERTEXT_PRESETS.join(", "),
        match program {
            "cryptonets" => cryptonets::PARAMETER_SETS.join(", "),
            _ => lr_inference::PARAMETER_SETS.join(", "),
        }
    );
    let bad = || -> crate::LabError {
        SimError::Invalid {
            name: "params",
            value: name.into(),
            allowed: allowed.clone(),
        }
        .into()
    };
    sets.map_err(|_| bad())?.into_iter().next().ok_or_else(bad)
}

/// One op class of the mix on the machine.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClassTime {
    /// The class ([`OpMix::classes`] name).
    pub class: &'static str,
    /// Ops of the class in the mix.
    pub count: u64,
    /// Simulated seconds of one op.
    pub per_op_s: f64,
    /// Commands of one op.
    pub commands: usize,
}

/// A program's op mix simulated on a single-PE machine.
#[derive(Clone, Debug)]
pub struct MixReport {
    /// The whole mix: each block's report scaled by its count and summed.
    pub report: Report,
    /// Per class.
    pub classes: Vec<ClassTime>,
    /// The parameters the blocks were recorded at.
    pub params: String,
}

/// Records one op of each class of `program`'s Table X mix at `params` and simulates the mix
/// on `arch` (a single-PE model).
pub fn simulate_mix(arch: &Arch, program: &str, params: &str) -> Result<MixReport> {
    if !matches!(arch, Arch::Pe(_)) {
        return Err(SimError::Unsupported(format!(
            "the BFV program '{program}' on '{}': BFV op mixes are simulated on single-PE \
             (128-bit word) models such as cofhee",
            arch.name()
        ))
        .into());
    }
    let mix = table_x(program)?;
    let p = parameters(program, params)?;
    let blocks = record_blocks(&p, &mix).map_err(|e| SimError::Unsupported(e.to_string()))?;
    let label = format!("{program}@{params} (CoFHEE Table X op mix)");
    let mut parts = Vec::with_capacity(blocks.len());
    let mut classes = Vec::with_capacity(blocks.len());
    for b in &blocks {
        let r = arch.simulate(&format!("{label}: one {}", b.class), &b.instrs)?;
        classes.push(ClassTime {
            class: b.class,
            count: b.count,
            per_op_s: r.time_s,
            commands: b.instrs.len(),
        });
        parts.push((r, b.count as f64));
    }
    let mut report = scaled_sum(&parts)
        .ok_or_else(|| SimError::Unsupported(format!("the op mix of '{program}' is empty")))?;
    if let Arch::Pe(m) = arch {
        whole_program_refills(m, &parts, &mut report);
    }
    report.workload = label;
    Ok(MixReport {
        report,
        classes,
        params: params.into(),
    })
}

/// `tessera simulate --workload cryptonets|lr-inference` ([`crate::run`] comes here for a BFV
/// program): the Table X mix at `r.params` (default: the program's set) on `arch`.
pub fn run(r: &crate::Request, arch: Arch, progress: &dyn Fn(&str)) -> Result<crate::Outcome> {
    for (flag, set) in [
        ("--level", r.level.is_some()),
        ("--of-limb", r.of_limb),
        ("--min-ks", r.min_ks),
        ("--no-hoisting", !r.hoisting),
        ("--double-hoisting", r.double_hoisting),
        ("--streamed-keyswitch", r.streamed_keyswitch),
        ("--size", r.size.is_some()),
        ("--data", r.data.is_some()),
        ("--additive", r.additive),
        ("--save-trace", r.save_trace.is_some()),
    ] {
        if set {
            return Err(SimError::Unsupported(format!(
                "{flag} with the BFV program '{}' (its CoFHEE time is CoFHEE Table X's op mix \
                 times each op's simulated time)",
                r.workload
            ))
            .into());
        }
    }
    let params = r
        .params
        .clone()
        .unwrap_or_else(|| tessera_programs::registry::default_params(&r.workload).into());
    progress(&format!(
        "recording one op of each class of {}'s Table X mix at '{params}' and simulating it",
        r.workload
    ));
    let start = std::time::Instant::now();
    let mix = simulate_mix(&arch, &r.workload, &params)?;
    let word = match &arch {
        Arch::Pe(m) => m.clock.word_bits,
        Arch::Vector(m) => m.clock.word_bits,
    };
    let context = vec![
        ("word_bits", serde_json::json!(word)),
        ("bfv_params", serde_json::json!(mix.params)),
        ("op_mix", serde_json::json!(mix.classes)),
        (
            "op_mix_note",
            serde_json::json!(
                "CoFHEE Table X's op counts x each op's simulated time (one PE, no overlap)"
            ),
        ),
    ];
    Ok(crate::Outcome {
        arch,
        report: mix.report,
        additive: None,
        window: None,
        schedule: None,
        simulation_s: start.elapsed().as_secs_f64(),
        params: None,
        context,
    })
}

/// Replaces the command-FIFO refills of the parts (each part refilled as a program of its own)
/// by those of the whole program ([`tessera_sim::cofhee::refill_s`]), keeping busy times.
fn whole_program_refills(m: &PeMachine, parts: &[(Report, f64)], out: &mut Report) {
    let per_parts: f64 = parts
        .iter()
        .map(|(r, k)| k * refill_s(m, r.instructions as usize))
        .sum();
    let old = out.time_s;
    out.time_s += refill_s(m, out.instructions as usize) - per_parts;
    if out.time_s > 0.0 && old > 0.0 {
        let keep_busy = old / out.time_s;
        for u in out.utilization.values_mut() {
            *u *= keep_busy;
        }
        for c in &mut out.components {
            c.utilization *= keep_busy;
        }
        out.avg_power_w = out.energy_j / out.time_s;
        out.tasks_per_minute = 60.0 / out.time_s;
    }
    out.edap = out.energy_j * out.time_s * out.area_mm2;
}

fn scale_map(acc: &mut BTreeMap<String, f64>, m: &BTreeMap<String, f64>, k: f64) {
    for (name, v) in m {
        *acc.entry(name.clone()).or_default() += v * k;
    }
}

/// `sum_i k_i r_i` over `parts` of the same machine: times, cycles, energy, bytes and
/// instructions add; utilizations are time-weighted; power, EDAP and tasks per minute are
/// recomputed from the sums. `None` when `parts` is empty.
pub fn scaled_sum(parts: &[(Report, f64)]) -> Option<Report> {
    let (first, _) = parts.first()?;
    let mut out = first.clone();
    out.time_s = 0.0;
    out.cycles = 0.0;
    out.energy_j = 0.0;
    out.offchip_bytes = 0.0;
    out.noc_bytes = 0.0;
    out.io_noc_bytes = 0.0;
    out.instructions = 0;
    out.utilization.clear();
    out.offchip_by_kind_bytes.clear();
    out.time_by_op_s.clear();
    out.peak_onchip_bytes = 0.0;
    out.register_file = first.register_file.as_ref().map(|r| r.empty());
    for c in &mut out.components {
        c.utilization = 0.0;
        c.energy_j = 0.0;
    }
    for (r, k) in parts {
        out.time_s += r.time_s * k;
        out.cycles += r.cycles * k;
        out.energy_j += r.energy_j * k;
        out.offchip_bytes += r.offchip_bytes * k;
        out.noc_bytes += r.noc_bytes * k;
        out.io_noc_bytes += r.io_noc_bytes * k;
        out.instructions += (r.instructions as f64 * k) as u64;
        out.peak_onchip_bytes = out.peak_onchip_bytes.max(r.peak_onchip_bytes);
        if let (Some(o), Some(rf)) = (out.register_file.as_mut(), &r.register_file) {
            o.add_scaled(rf, *k);
        }
        // Utilizations weighted by the time they held for; divided by the total below.
        scale_map(&mut out.utilization, &r.utilization, k * r.time_s);
        scale_map(&mut out.offchip_by_kind_bytes, &r.offchip_by_kind_bytes, *k);
        scale_map(&mut out.time_by_op_s, &r.time_by_op_s, *k);
        for (c, rc) in out.components.iter_mut().zip(&r.components) {
            c.utilization += rc.utilization * k * r.time_s;
            c.energy_j += rc.energy_j * k;
        }
    }
    if out.time_s > 0.0 {
        for u in out.utilization.values_mut() {
            *u /= out.time_s;
        }
        for c in &mut out.components {
            c.utilization /= out.time_s;
        }
        out.avg_power_w = out.energy_j / out.time_s;
        out.tasks_per_minute = 60.0 / out.time_s;
    }
    out.edap = out.energy_j * out.time_s * out.area_mm2;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks' reports scaled by their counts, with the whole program's FIFO refills,
    /// equal the simulation of the expanded stream (the PE model runs commands one at a time).
    #[test]
    fn scaled_sum_matches_the_repeated_stream() {
        let arch = Arch::load_with("cofhee", &[]).unwrap();
        let p = BfvParams::preset("test-bfv").unwrap();
        let mix = OpMix {
            ct_add: 3,
            ct_ct_mul: 2,
            relin: 2,
            ..Default::default()
        };
        let blocks = record_blocks(&p, &mix).unwrap();
        let parts: Vec<(Report, f64)> = blocks
            .iter()
            .map(|b| (arch.simulate("b", &b.instrs).unwrap(), b.count as f64))
            .collect();
        let mut sum = scaled_sum(&parts).unwrap();
        let Arch::Pe(m) = &arch else { unreachable!() };
        whole_program_refills(m, &parts, &mut sum);
        let whole = tessera_bfv::record(&p, &mix).unwrap();
        let r = arch.simulate("whole", &whole).unwrap();
        let rel = (sum.time_s - r.time_s).abs() / r.time_s;
        assert!(rel < 1e-9, "{} vs {}", sum.time_s, r.time_s);
        assert!((sum.cycles - r.cycles).abs() / r.cycles < 1e-9);
        assert_eq!(sum.instructions, r.instructions);
    }

    #[test]
    fn refuses_vector_machines_and_unknown_names() {
        let ark = Arch::load_with("ark", &[]).unwrap();
        let e = simulate_mix(&ark, "cryptonets", "bfv-n12").unwrap_err();
        assert!(e.to_string().contains("single-PE"), "{e}");
        let cofhee = Arch::load_with("cofhee", &[]).unwrap();
        let e = simulate_mix(&cofhee, "cryptonets", "ark").unwrap_err();
        assert!(e.to_string().contains("params"), "{e}");
        assert!(table_x("helr").is_err());
    }
}
