//! `sort`: sorting `2^k` real numbers encrypted in one ciphertext (workloads.md 5; ARK and
//! CiFHER's "sorting" application after Hong et al., TIFS 2021, as in Cheddar's `Sorting.cpp`):
//! a bitonic network with flips ([`network`]), the comparison `(sgn(a - b) + 1) / 2` by
//! Cheon-Kim-Kim's composite polynomials, bootstrapped by the programs' level rule.
//!
//! Input (as Cheddar's test): `n` values uniform in `[-1/2, 1/2]` from a fixed-seed
//! generator, so every difference lies in `[-1, 1]`, the sign's domain. Check: the decrypted
//! output within [`TOLERANCE`] of the sorted input (Cheddar compares with `std::sort` to
//! 1e-2); the distance to the replica ([`replica`], same polynomials in f64) is reported too.

pub mod he;
pub mod network;
pub mod replica;

use crate::counter::{Counting, OpCounts};
use crate::error::{ProgramError, Result};
use crate::report::max_diff;
use crate::report::{Check, Phases, Recorded, RunReport, Stopwatch};
use crate::setup::Setup;
use tessera_backend::{Compute, TraceBackend};
use tessera_ckks::circuits::sign::CompositeSign;
use tessera_ckks::Evaluator;

/// The output must be within this of the sorted input (Cheddar's check).
pub const TOLERANCE: f64 = 1e-2;
/// The papers' size: `2^14` values.
pub const DEFAULT_SIZE: usize = 1 << 14;
/// CKK's composite sign: `f_3^(4) o g_3^(8)`, degree-7 pieces, depth 36 (Cheddar's
/// `f_iter = 4`, `g_iter = 8`; workloads.md 5.3).
pub const SIGN: (usize, usize, usize) = (3, 4, 8);
/// The seed of the input values.
pub const SEED: u64 = 14;

/// What to run.
#[derive(Clone, Debug)]
pub struct SortConfig {
    /// Parameter set ([`crate::setup::PARAMETER_SETS`]).
    pub params: String,
    /// Values to sort: a power of two from 4 to the parameter set's `N / 2`.
    pub size: usize,
}

/// The comparison's composite sign ([`SIGN`]).
pub fn comparison() -> Result<CompositeSign> {
    let (n, df, dg) = SIGN;
    Ok(CompositeSign::ckk(n, df, dg)?)
}

/// `n` values uniform in `[-1/2, 1/2]` from SplitMix64 seeded with `seed`.
pub fn input(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            let u = crate::helr::dataset::splitmix(&mut state) >> 11;
            u as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

/// Keys and parameters, validated: the size fits the set's slots and a step fits its levels.
fn prepare(cfg: &SortConfig) -> Result<(Setup, CompositeSign)> {
    let bad_size = |allowed: String| ProgramError::Invalid {
        name: "size (values to sort)",
        value: cfg.size.to_string(),
        allowed,
    };
    if !cfg.size.is_power_of_two() || cfg.size < 4 {
        return Err(bad_size(format!(
            "a power of two from 4 to the parameter set's N/2 (the papers sort 2^14 = {DEFAULT_SIZE})"
        )));
    }
    let sign = comparison()?;
    let log_n = cfg.size.trailing_zeros() as usize;
    // The set's slot limit and its bootstrapping's smallest slot count name the size.
    let setup = match Setup::new(&cfg.params, cfg.size, &network::rotations(log_n)) {
        Err(ProgramError::Invalid {
            name: "slots",
            allowed,
            ..
        }) => return Err(bad_size(format!("{allowed} at '{}'", cfg.params))),
        Err(ProgramError::Ckks(tessera_ckks::CkksError::InvalidParameter {
            name: "cts_levels",
            allowed,
            ..
        })) => {
            return Err(bad_size(format!(
                "at least the bootstrapping's CoeffToSlot radix at '{}' ({allowed})",
                cfg.params
            )))
        }
        other => other?,
    };
    let need = (0..sign.pieces().len())
        .map(|i| he::piece_levels(&sign, i))
        .max()
        .unwrap_or(0)
        .max(he::STATE_LEVELS);
    setup.budget().check_stage("sort", &cfg.params, need)?;
    Ok((setup, sign))
}

/// Sorts encrypted on the CPU backend and checks against the sorted input and the replica.
pub fn run_cpu(
    cfg: &SortConfig,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RunReport> {
    let mut clock = Stopwatch::start();
    progress("keygen", 0, 1);
    let (mut setup, sign) = prepare(cfg)?;
    let keygen_s = clock.lap();
    progress("encrypt", 0, 1);
    let x = input(cfg.size, SEED);
    let ct = setup.encrypt_top(&x)?;
    let encrypt_s = clock.lap();
    let mut ev = crate::setup::evaluator(
        &setup.ctx,
        Counting::new(Compute::from_default(setup.ctx.ring().clone())?),
    )?;
    let total = network::steps(cfg.size.trailing_zeros() as usize).len();
    progress("compute", 0, total);
    let ct = ev.load(&ct)?;
    let out = he::run(&setup, &mut ev, &ct, &sign, &mut |i| {
        progress("compute", i, total)
    })?;
    let compute_s = clock.lap();
    progress("decrypt", 0, 1);
    let got = setup.decrypt(&ev.store(&out.x)?)?;
    let got = &got[..cfg.size];
    let mut sorted = x.clone();
    sorted.sort_by(f64::total_cmp);
    let rep = replica::sort(&x, &sign);
    let decrypt_s = clock.lap();
    let (n, df, dg) = SIGN;
    Ok(RunReport {
        program: "sort".into(),
        params: cfg.params.clone(),
        size: cfg.size,
        iterations: total,
        checks: vec![
            Check::at_most("max |out - sorted input|", max_diff(got, &sorted), TOLERANCE),
            Check::info("max |out - replica|", max_diff(got, &rep)),
            Check::info("max |replica - sorted input|", max_diff(&rep, &sorted)),
        ],
        phases: Phases {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        },
        counts: ev.backend().counts().clone(),
        boots: out.boots,
        levels_per_boot: setup.budget().after_boot,
        keys_on_demand: setup.keys_on_demand,
        notes: vec![format!(
            "{} values uniform in [-1/2, 1/2] (seed {SEED}) in one ciphertext of {} slots; bitonic network of {total} compare-exchange steps; comparison f_{n}^({df}) o g_{n}^({dg}), depth {}; an iteration is one step",
            cfg.size,
            cfg.size,
            sign.depth()
        )],
    })
}

/// Records the sort on the trace backend (the same code as [`run_cpu`]): with `steady`, one
/// steady-state window, otherwise the whole sort.
///
/// A step's operations depend only on the level of the state it starts from (and the
/// rotation distance, which selects a key but not the work), and the level after a step is a
/// function of the level before, so the levels repeat with some period `p` after a few steps
/// (`p = 1` at `ark`: every step bootstraps the state once and the comparison five times).
/// The steady window is one such period recorded from a fresh encryption at its starting
/// level; time per sort = window time / `p` x the network's steps. The levels are found by
/// running the steps one at a time on throwaway trace backends (a whole sort at `N = 2^16`
/// does not fit in memory as one trace: hundreds of bootstrappings).
pub fn record(cfg: &SortConfig, steady: bool) -> Result<Recorded> {
    let (mut setup, sign) = prepare(cfg)?;
    let n = cfg.size;
    let all = network::steps(n.trailing_zeros() as usize);
    let x = input(n, SEED);
    let trace = |setup: &Setup| -> Result<Evaluator<TraceBackend>> {
        crate::setup::evaluator(&setup.ctx, TraceBackend::trace(setup.ctx.ring().clone()))
    };
    let (window, first, start_level) = if steady {
        let mut levels = vec![setup.boot.output_level()];
        let start = loop {
            let k = levels.len() - 1;
            let mut ev = trace(&setup)?;
            let ct = setup.encrypt(&x, n, levels[k])?;
            let ct = ev.load(&ct)?;
            let out = he::step(&setup, &mut ev, ct, &all[k % all.len()], &sign, &mut 0)?;
            if let Some(p) = levels.iter().position(|&l| l == out.level) {
                break p;
            }
            levels.push(out.level);
        };
        (levels.len() - start, start, levels[start])
    } else {
        (all.len(), 0, setup.boot.output_level())
    };
    let ct = setup.encrypt(&x, n, start_level)?;
    let mut ev = trace(&setup)?;
    let mut x = ev.load(&ct)?;
    let mut boots = 0;
    for k in first..first + window {
        x = he::step(&setup, &mut ev, x, &all[k % all.len()], &sign, &mut boots)?;
    }
    let b = ev.backend_mut();
    b.record_store(&x.c0);
    b.record_store(&x.c1);
    let instrs = ev.backend().instructions().to_vec();
    let what = if steady {
        format!(
            "steady state: {window} step(s) from level {start_level} (the levels repeat from step {}); a sort is {} steps",
            first + 1,
            all.len()
        )
    } else {
        format!("one sort of {n} values ({} steps)", all.len())
    };
    Ok(Recorded {
        label: format!("sort{n}@{} ({what})", cfg.params),
        counts: OpCounts::from_trace(&instrs),
        instrs,
        iterations: window,
        unit: "step",
        per_run: Some(all.len()),
        window: what,
        boots,
        levels_per_boot: setup.budget().after_boot,
        slots: setup.ctx.params().max_slots(),
    })
}
