//! HELR encrypted, in the Cheddar layout (workloads.md 2.4): each ciphertext of `Z` holds
//! `N / 512` samples of 256 features (slot `256 j + k`), the weights `v` and `w` are 256-slot
//! ciphertexts (sparse packing repeats them over the full slots).
//!
//! One iteration, five levels (`l` is `v`'s level; `r` primes per level):
//! 1. Inner products: `P = Z_k * v` (HMult), rotate-and-sum within each 256-slot row (8 HRot),
//!    a PMult by the mask `kappa` at slots `256 j`, then replicate back over the row (8 HRot):
//!    `ip' = kappa <z_j, v>` in every slot of row `j` (levels `l - 1`, `l - 2`).
//! 2. Sigmoid and gradient (ours: the constants fold into the mask): with
//!    `kappa^3 = gamma c3`, `t = (Z_k ip') (ip'^2 + c1 kappa^2 / c3) = gamma (c1 ip + c3 ip^3) z`
//!    (3 HMult), plus `gamma c0 z` (1 CMult), summed over the ciphertexts and over the samples
//!    of a ciphertext (7 HRot by 256 ... 16384 at N = 2^16): `g` (levels `l - 3`, `l - 4`).
//! 3. NAG: `tmp = v + g`, `v = (1 - eta) tmp + eta w`, `w = tmp` (2 CMult; level `l - 5`).
//!
//! Scales are exact, not approximately equal: the mask's encoding scale is chosen so that
//! `t` lands on `v`'s scale (a cube root, since `t` is cubic in the mask), and each constant
//! is encoded at the scale that puts its product on the scale it is added to.
//!
//! The same machinery trains a linear model ([`Model::Linear`], the `linreg` program): rows
//! `(1, x, y)`, weights `(w, -1)` so that step 1 gives the residual, then step 2 is
//! `t = X_k ip'` (1 HMult) with `X_k` the rows with their target slot cleared (a PMult of `Z_k`
//! at its own level, off the critical path): four levels per iteration.
//!
//! Bootstrapping: `v` and `w` together, as `v + i w` (merged two-real, one bootstrapping per
//! placement, [`crate::setup::bootstrap_two_real`]). Placement follows
//! [`crate::levels::LevelBudget`]: before an iteration of 5 levels, if fewer than 5 remain.

use super::dataset::Dataset;
use super::replica::etas;
use crate::error::Result;
use crate::setup::{bootstrap_two_real, drop_to, Pair, Setup};
use tessera_backend::Backend;
use tessera_ckks::{Ciphertext, Evaluator};
use tessera_math::RnsPoly;

/// The model trained: what one row contributes to the gradient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Model {
    /// Logistic regression (HELR): rows `z = y' (1, x)`, gradient `gamma s(<z, v>) z` with
    /// the odd cubic `s = c0 + c1 x + c3 x^3 ~ sigma(-x)`, `[c0, c1, c3]`.
    Logistic([f64; 3]),
    /// Least-squares linear regression: rows `(1, x, y)` with the target `y` in slot
    /// `target`, weights `(w, -1)` (the `-1` in slot `target` stays), so `<z, v>` is the
    /// residual `e = <(1, x), w> - y`; gradient step `-rate gamma e (1, x)`.
    Linear {
        /// The target's slot in a row.
        target: usize,
        /// The learning rate.
        rate: f64,
    },
}

impl Model {
    /// Levels one iteration consumes: 5 (logistic), 4 (linear).
    pub fn levels(&self) -> usize {
        match self {
            Model::Logistic(_) => 5,
            Model::Linear { .. } => 4,
        }
    }

    /// The initial weights `v = w` on rows of `width`: zero, and `-1` at a linear model's
    /// target slot.
    pub fn initial(&self, width: usize) -> Vec<f64> {
        let mut v = vec![0.0; width];
        if let Model::Linear { target, .. } = *self {
            v[target] = -1.0;
        }
        v
    }
}

/// Row rotations of a `width`-feature row: `1, 2, .., width / 2`.
pub(crate) fn row_steps(width: usize) -> Vec<i64> {
    (0..width.trailing_zeros()).map(|i| 1i64 << i).collect()
}

/// Sample-sum rotations: `width, 2 width, .., slots / 2`.
fn sample_steps(width: usize, slots: usize) -> Vec<i64> {
    std::iter::successors(Some(width), |&s| Some(2 * s))
        .take_while(|&s| s < slots)
        .map(|s| s as i64)
        .collect()
}

/// The rotations one iteration uses (`slots` per ciphertext, rows of `width` features; HELR:
/// 256): left by `1 .. width / 2` (row sums), right by the same (replication), left by
/// `width .. slots / 2` (sample sums).
pub fn rotations(slots: usize, width: usize) -> Vec<i64> {
    let rows = row_steps(width);
    let mut r = rows.clone();
    r.extend(rows.iter().map(|s| -s));
    r.extend(sample_steps(width, slots));
    r
}

/// The encrypted inputs: `Z` by block and ciphertext, and the initial weights.
pub struct Inputs {
    /// `z[b][k]`: ciphertext `k` of training block `b`.
    pub z: Vec<Vec<Ciphertext<RnsPoly>>>,
    /// The initial `v = w` ([`Model::initial`]) at the bootstrapping's output level.
    pub init: Ciphertext<RnsPoly>,
}

/// Encrypts the first `blocks` blocks of `m` rows, and `model`'s initial weights, at the
/// bootstrapping's output level.
pub fn encrypt(
    setup: &mut Setup,
    ds: &Dataset,
    m: usize,
    blocks: usize,
    model: &Model,
) -> Result<Inputs> {
    let slots = setup.ctx.params().max_slots();
    let width = ds.width();
    let per_ct = (slots / width).max(1);
    let top = setup.boot.output_level();
    let mut z = Vec::with_capacity(blocks);
    for b in 0..blocks {
        let rows = ds.block(b, m);
        let cts = rows
            .chunks(per_ct)
            .map(|chunk| {
                let flat: Vec<f64> = chunk.iter().flatten().copied().collect();
                setup.encrypt(&flat, slots, top)
            })
            .collect::<Result<Vec<_>>>()?;
        z.push(cts);
    }
    let init = setup.encrypt(&model.initial(width), width, top)?;
    Ok(Inputs { z, init })
}

/// What the iterations run: how many, whether a bootstrapping follows the last one (a
/// steady-state window for the simulator), and the iterations' NAG schedule.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Mini-batch size.
    pub m: usize,
    /// Iterations to run.
    pub iterations: usize,
    /// Bootstrap after the last iteration too (one iteration window with its amortised
    /// bootstrapping).
    pub boot_after_last: bool,
    /// The model (HELR: [`Model::Logistic`] with [`super::replica::SIGMOID`]).
    pub model: Model,
}

/// The weights after the run and what it did.
pub struct Outcome<P> {
    /// The final `w`.
    pub w: Ciphertext<P>,
    /// Bootstrappings performed.
    pub boots: usize,
}

/// `x + rot(x, s)` for each `s` in turn.
pub(crate) fn rotate_sum<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    steps: impl IntoIterator<Item = i64>,
) -> Result<Ciphertext<B::Poly>> {
    let mut x = x.clone();
    for s in steps {
        let r = ev.rotate(&x, s, &setup.keys.eval)?;
        x = ev.add(&x, &r)?;
    }
    Ok(x)
}

/// `c x` rescaled, with `c` encoded so that the result's scale is `target`.
fn mul_const_to<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    x: &Ciphertext<B::Poly>,
    c: f64,
    target: f64,
) -> Result<Ciphertext<B::Poly>> {
    let divisor = setup.ctx.params().rescale_divisor(x.level);
    let y = ev.mul_const(x, c, target * divisor / x.scale)?;
    Ok(ev.rescale(&y)?)
}

/// Step 1: `ip' = kappa <z_j, v>` in every slot of row `j` of `zk` (`zk` at any level above
/// `v`'s), at scale `ip_scale` (the mask's encoding scale is chosen for it), two levels below
/// `v`.
fn inner_products<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    zk: &Ciphertext<B::Poly>,
    v: &Ciphertext<B::Poly>,
    kappa: f64,
    ip_scale: f64,
) -> Result<Ciphertext<B::Poly>> {
    let params = setup.ctx.params();
    let slots = params.max_slots();
    let width = v.slots;
    let z_top = drop_to(ev, zk, v.level)?;
    let p = ev.mul_relin_rescale(&z_top, v, &setup.keys.eval)?;
    let p = rotate_sum(setup, ev, &p, row_steps(width))?;
    let mask: Vec<f64> = (0..slots)
        .map(|i| if i % width == 0 { kappa } else { 0.0 })
        .collect();
    let lp = p.level;
    let mask = setup.ctx.encode_real(
        &mask,
        slots,
        lp,
        ip_scale * params.rescale_divisor(lp) / p.scale,
    )?;
    let p = ev.mul_plain(&p, &mask)?;
    let p = ev.rescale(&p)?;
    rotate_sum(setup, ev, &p, row_steps(width).iter().map(|s| -s))
}

/// Step 2 of a logistic model: `t = (Z_k ip') (ip'^2 + c1 kappa^2 / c3) + gamma c0 z`, at
/// `v`'s scale, four levels below `v`.
fn logistic_term<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    zk: &Ciphertext<B::Poly>,
    v: &Ciphertext<B::Poly>,
    gamma: f64,
    [c0, c1, c3]: [f64; 3],
) -> Result<Ciphertext<B::Poly>> {
    let params = setup.ctx.params();
    let budget = setup.budget();
    let keys = &setup.keys.eval;
    let kappa = (gamma * c3).cbrt();
    let (la, lb) = (budget.after(v.level, 2), budget.after(v.level, 3));
    let (div_a, div_b) = (params.rescale_divisor(la), params.rescale_divisor(lb));
    // t is cubic in the mask: its scale lands on v's for this ip' scale.
    let t_scale = (v.scale * div_a * div_a * div_b / zk.scale).cbrt();
    let ip = inner_products(setup, ev, zk, v, kappa, t_scale)?;
    let sq = ev.mul_relin_rescale(&ip, &ip, keys)?;
    let u = ev.add_const(&sq, c1 * kappa * kappa / c3)?;
    let z_a = drop_to(ev, zk, la)?;
    let zi = ev.mul_relin_rescale(&z_a, &ip, keys)?;
    let t = ev.mul_relin_rescale(&zi, &u, keys)?;
    let z_b = drop_to(ev, zk, lb)?;
    let z0 = mul_const_to(setup, ev, &z_b, gamma * c0, t.scale)?;
    Ok(ev.add(&t, &z0)?)
}

/// Step 2 of a linear model: `t = X_k ip'` with `ip' = -rate gamma e` and `X_k` the rows of
/// `zk` with the target slot cleared, at `v`'s scale, three levels below `v`.
fn linear_term<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    zk: &Ciphertext<B::Poly>,
    v: &Ciphertext<B::Poly>,
    gamma: f64,
    target: usize,
    rate: f64,
) -> Result<Ciphertext<B::Poly>> {
    let params = setup.ctx.params();
    let slots = params.max_slots();
    let width = v.slots;
    let la = setup.budget().after(v.level, 2);
    // X_k = Z_k with slot `target` of each row cleared, at Z_k's scale (one level of Z_k's).
    let keep: Vec<f64> = (0..slots)
        .map(|i| f64::from(u8::from(i % width != target)))
        .collect();
    let keep = setup
        .ctx
        .encode_real(&keep, slots, zk.level, params.rescale_divisor(zk.level))?;
    let xk = ev.mul_plain(zk, &keep)?;
    let xk = Ciphertext {
        scale: zk.scale,
        ..ev.rescale(&xk)?
    };
    let x_a = drop_to(ev, &xk, la)?;
    let ip_scale = v.scale * params.rescale_divisor(la) / x_a.scale;
    let ip = inner_products(setup, ev, zk, v, -rate * gamma, ip_scale)?;
    Ok(ev.mul_relin_rescale(&x_a, &ip, &setup.keys.eval)?)
}

/// One iteration from `(v, w)`; `eta` its momentum.
fn iteration<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    z: &[Ciphertext<RnsPoly>],
    v: &Ciphertext<B::Poly>,
    w: &Ciphertext<B::Poly>,
    plan: &Plan,
    eta: f64,
) -> Result<Pair<B>> {
    let slots = setup.ctx.params().max_slots();
    let gamma = 1.0 / plan.m as f64;
    // v is a `width`-slot ciphertext: the weights of one row.
    let width = v.slots;
    let mut sum: Option<Ciphertext<B::Poly>> = None;
    for zk in z {
        let zk = ev.load(zk)?;
        let s = match plan.model {
            Model::Logistic(c) => logistic_term(setup, ev, &zk, v, gamma, c)?,
            Model::Linear { target, rate } => linear_term(setup, ev, &zk, v, gamma, target, rate)?,
        };
        sum = Some(match sum {
            None => s,
            Some(acc) => ev.add(&acc, &s)?,
        });
    }
    let g = sum.expect("at least one ciphertext");
    let g = rotate_sum(setup, ev, &g, sample_steps(width, slots))?;
    // g repeats with period `width` (every row holds the sum): a `width`-slot ciphertext;
    // its scale is v's by the choice of the mask scale (up to f64 rounding).
    if (g.scale / v.scale - 1.0).abs() > 1e-9 {
        return Err(crate::error::ProgramError::Unsupported(format!(
            "helr: gradient scale 2^{:.3} differs from the weights' 2^{:.3}",
            g.scale.log2(),
            v.scale.log2()
        )));
    }
    let g = Ciphertext {
        slots: width,
        scale: v.scale,
        ..g
    };
    // 3. NAG.
    let v_low = drop_to(ev, v, g.level)?;
    let tmp = ev.add(&v_low, &g)?;
    let a = mul_const_to(setup, ev, &tmp, 1.0 - eta, v.scale)?;
    let w_low = drop_to(ev, w, g.level)?;
    let b = mul_const_to(setup, ev, &w_low, eta, v.scale)?;
    let v_next = ev.add(&a, &b)?;
    let w_next = drop_to(ev, &tmp, v_next.level)?;
    Ok((v_next, w_next))
}

/// Runs `plan` on `ev` from the encrypted `inputs`; `progress(t)` after iteration `t`.
pub fn run<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    inputs: &Inputs,
    plan: &Plan,
    progress: &mut dyn FnMut(usize),
) -> Result<Outcome<B::Poly>> {
    let budget = setup.budget();
    let mut v = ev.load(&inputs.init)?;
    let levels = plan.model.levels();
    let mut w = v.clone();
    let mut boots = 0;
    let blocks = inputs.z.len();
    for (t, eta) in etas(plan.iterations).into_iter().enumerate() {
        let after = budget.after(v.level, levels);
        let last = t + 1 == plan.iterations;
        let boot = (!last || plan.boot_after_last) && budget.must_boot(after, levels);
        let (nv, nw) = iteration(setup, ev, &inputs.z[t % blocks], &v, &w, plan, eta)?;
        (v, w) = (nv, nw);
        if boot {
            (v, w) = bootstrap_two_real(setup, ev, &v, &w)?;
            boots += 1;
        }
        progress(t);
    }
    Ok(Outcome { w, boots })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HELR's 23 rotation keys at N = 2^16 (workloads.md 2.7: "about 23 used").
    #[test]
    fn helr_rotations_at_n16() {
        let r = rotations(32768, 256);
        assert_eq!(r.len(), 23);
        assert_eq!(&r[..8], &[1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(r[8], -1);
        assert_eq!(r[16..], [256, 512, 1024, 2048, 4096, 8192, 16384]);
        // 32-feature rows (logreg): 5 + 5 + 10.
        assert_eq!(rotations(32768, 32).len(), 20);
    }
}
