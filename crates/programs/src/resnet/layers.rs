//! ResNet-20's layers on multiplexed vectors ([`super::packing`]), written once over
//! [`SlotOps`] (workloads.md 3.4; FHE-MP-CNN's `multiplexed_parallel_convolution`,
//! `multiplexed_parallel_downsampling`, `averagepooling`, `fully_connected`).
//!
//! Values are held in units of the AppReLU bound `B` (`x / B`), so AppReLU needs no division
//! and the bootstrapping sees values in `[-1, 1]`; BatchNorm shifts are divided by `B` and the
//! average pooling multiplies by `B` again.
//!
//! * **MPConv** (2 levels): 8 rotations of the input by `row (i1 - 1) + k (i2 - 1)` (hoisted).
//!   The input holds `p_i` copies; for output group `g`, copy `u` carries output channel
//!   `p_i g + u`: 9 products by shifted-weight vectors (weight `w[o][ch][i1][i2]` at the slot
//!   of input channel `ch` at `(i, j)` in copy `u`, 0 where the tap falls off the image),
//!   summed and rescaled. The input channels are then summed into the slot of channel 0
//!   (rotate-and-add by `2^x`, by `2^x k w` and by `2^x k^2 h w`, or `t - 1` explicit
//!   rotations when `t` is not a power of two). Each output channel is rotated from its copy
//!   to its place in the output layout and selected by a mask holding its BatchNorm factor
//!   (rotation by a constant: the row and column strides of the surviving positions are the
//!   same in both layouts, also for stride 2, whose output has gap `2k`). Rescale, replicate
//!   the block to `p_o` copies, add the BatchNorm shift.
//! * **Option-A shortcut** (1 level): each input channel rotated to its padded place at the
//!   even positions of the stride-2 layout and masked; channels needing the same rotation
//!   share one rotation and one mask.
//! * **Average pooling** (1 level): rotate-and-add over columns and rows, then channels
//!   gathered to slots `0 .. c` by masks holding `B / (h w)` (same grouping).
//! * **FC** (1 level): the `10 x c` matrix by its diagonals with BSGS
//!   ([`LinearTransform`]), then the bias.

use super::model::{Conv, Model, CLASSES};
use super::packing::Shape;
use super::slots::{reduce, SlotOps};
use crate::error::{ProgramError, Result};
use num_complex::Complex64;
use std::collections::BTreeMap;
use tessera_ckks::circuits::linear::LinearTransform;

/// Levels an MPConv takes.
pub const CONV_LEVELS: usize = 2;

/// `sum` of optional vectors.
fn accumulate<S: SlotOps>(s: &mut S, acc: Option<S::Ct>, x: S::Ct) -> Result<Option<S::Ct>> {
    Ok(Some(match acc {
        None => x,
        Some(a) => s.add(&a, &x)?,
    }))
}

/// Rotate-and-add: `sum_(m < count) x[s + m step]` (`count` a power of two).
fn rotate_sum<S: SlotOps>(s: &mut S, x: &S::Ct, step: usize, count: usize) -> Result<S::Ct> {
    let mut y = x.clone();
    let mut m = 1;
    while m < count {
        let r = s.rotate(&y, (m * step) as i64)?;
        y = s.add(&y, &r)?;
        m *= 2;
    }
    Ok(y)
}

/// `count` copies of the first `region` slots (zero elsewhere), `region` apart.
fn replicate<S: SlotOps>(s: &mut S, x: &S::Ct, region: usize, count: usize) -> Result<S::Ct> {
    let mut y = x.clone();
    let mut m = 1;
    while m < count {
        let r = s.rotate(&y, -((m * region) as i64))?;
        y = s.add(&y, &r)?;
        m *= 2;
    }
    Ok(y)
}

/// Moves values by rotations shared among sources with the same offset: `moves` lists
/// `(source slot, destination slot, factor)`; the result holds `factor * x[source]` at each
/// destination and 0 elsewhere (one level). Destinations must be distinct.
fn gather<S: SlotOps>(s: &mut S, x: &S::Ct, moves: &[(usize, usize, f64)]) -> Result<S::Ct> {
    let n = s.slots();
    let mut masks: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for &(src, dst, f) in moves {
        let r = reduce(src as i64 - dst as i64, n);
        masks.entry(r).or_insert_with(|| vec![0.0; n])[dst] = f;
    }
    let rs: Vec<i64> = masks.keys().copied().filter(|&r| r != 0).collect();
    let rotated = s.rotate_many(x, &rs)?;
    let mut acc = None;
    for (r, mask) in &masks {
        let y = if *r == 0 {
            x.clone()
        } else {
            rotated[rs.iter().position(|q| q == r).expect("rotated")].clone()
        };
        let y = s.mul_plain(&y, mask)?;
        acc = accumulate(s, acc, y)?;
    }
    let acc = acc.ok_or_else(|| ProgramError::Invalid {
        name: "gather",
        value: "no moves".into(),
        allowed: "at least one value to move".into(),
    })?;
    s.rescale(&acc)
}

/// Sums the `t` channel blocks and the `k^2` interleaved channels of every position into the
/// slot of channel 0 (slots elsewhere hold partial sums).
fn channel_sum<S: SlotOps>(s: &mut S, x: &S::Ct, sh: &Shape) -> Result<S::Ct> {
    let y = rotate_sum(s, x, 1, sh.k)?;
    let y = rotate_sum(s, &y, sh.k * sh.w, sh.k)?;
    let blk = sh.k * sh.k * sh.h * sh.w;
    let t = sh.t();
    if t.is_power_of_two() {
        return rotate_sum(s, &y, blk, t);
    }
    let rs: Vec<i64> = (1..t).map(|u| (u * blk) as i64).collect();
    let mut acc = y.clone();
    for r in s.rotate_many(&y, &rs)? {
        acc = s.add(&acc, &r)?;
    }
    Ok(acc)
}

/// MPConv with BatchNorm: `conv` applied to `x` laid out as `sh`; returns the output and its
/// layout (gap `stride k`). `inv_bound`: the unit of the values (`1 / B`), applied to the
/// shift.
pub fn conv<S: SlotOps>(
    s: &mut S,
    x: &S::Ct,
    sh: &Shape,
    k: &Conv,
    inv_bound: f64,
) -> Result<(S::Ct, Shape)> {
    if sh.c != k.cin || sh.n != s.slots() {
        return Err(ProgramError::Invalid {
            name: "conv input",
            value: format!("{} channels in {} slots", sh.c, sh.n),
            allowed: format!("{} channels in {} slots", k.cin, s.slots()),
        });
    }
    let so = sh.strided(k.stride, k.cout)?;
    let x = s.ensure_levels(x, CONV_LEVELS, sh.region())?;
    let taps: Vec<(usize, usize, i64)> = (0..9)
        .map(|t| {
            let (i1, i2) = (t / 3, t % 3);
            let r = (i1 as i64 - 1) * sh.row() as i64 + (i2 as i64 - 1) * sh.k as i64;
            (i1, i2, r)
        })
        .collect();
    let rs: Vec<i64> = taps.iter().map(|t| t.2).filter(|&r| r != 0).collect();
    let mut rotated = s.rotate_many(&x, &rs)?.into_iter();
    let copies: Vec<S::Ct> = taps
        .iter()
        .map(|t| {
            if t.2 == 0 {
                x.clone()
            } else {
                rotated.next().expect("8 rotations")
            }
        })
        .collect();
    let (pi, region) = (sh.p(), sh.region());
    let groups = k.cout.div_ceil(pi);
    let mut out = None;
    for g in 0..groups {
        let mut prod = None;
        for (tap, &(i1, i2, _)) in taps.iter().enumerate() {
            let mut wv = vec![0.0; sh.n];
            let mut any = false;
            for u in 0..pi {
                let o = pi * g + u;
                if o >= k.cout {
                    break;
                }
                for ch in 0..sh.c {
                    for i in 0..sh.h {
                        let y = i as isize + i1 as isize - 1;
                        if y < 0 || y >= sh.h as isize {
                            continue;
                        }
                        for j in 0..sh.w {
                            let xx = j as isize + i2 as isize - 1;
                            if xx < 0 || xx >= sh.w as isize {
                                continue;
                            }
                            let w = k.w(o, ch, i1, i2);
                            wv[u * region + sh.slot(ch, i, j)] = w;
                            any |= w != 0.0;
                        }
                    }
                }
            }
            if any {
                let p = s.mul_plain(&copies[tap], &wv)?;
                prod = accumulate(s, prod, p)?;
            }
        }
        let Some(prod) = prod else { continue };
        let prod = s.rescale(&prod)?;
        let summed = channel_sum(s, &prod, sh)?;
        let moves: Vec<(usize, usize, f64)> = (0..pi)
            .map(|u| (u, pi * g + u))
            .filter(|&(_, o)| o < k.cout)
            .flat_map(|(u, o)| (0..so.h).flat_map(move |i| (0..so.w).map(move |j| (u, o, i, j))))
            .map(|(u, o, i, j)| {
                let src = u * region + sh.slot(0, i * k.stride, j * k.stride);
                (src, so.slot(o, i, j), k.factor[o])
            })
            .collect();
        // One rotation per output channel (its offset is constant); masks not rescaled yet.
        let n = sh.n;
        let mut by_rot: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for &(src, dst, f) in &moves {
            by_rot
                .entry(reduce(src as i64 - dst as i64, n))
                .or_insert_with(|| vec![0.0; n])[dst] = f;
        }
        for (r, mask) in by_rot {
            let y = s.rotate(&summed, r)?;
            let y = s.mul_plain(&y, &mask)?;
            out = accumulate(s, out, y)?;
        }
    }
    let out = out.ok_or_else(|| ProgramError::Invalid {
        name: "conv weights",
        value: "all zero".into(),
        allowed: "a convolution with a nonzero weight".into(),
    })?;
    let y = s.rescale(&out)?;
    let y = replicate(s, &y, so.region(), so.p())?;
    let shift = so.fill(|o, _, _| k.shift[o] * inv_bound);
    Ok((s.add_plain(&y, &shift)?, so))
}

/// The option-A shortcut of `x` (layout `sh`) to `cout` channels at stride 2 (1 level).
pub fn shortcut<S: SlotOps>(
    s: &mut S,
    x: &S::Ct,
    sh: &Shape,
    cout: usize,
) -> Result<(S::Ct, Shape)> {
    let so = sh.strided(2, cout)?;
    let pad = (cout - sh.c) / 2;
    let x = s.ensure_levels(x, 1, sh.region())?;
    let moves: Vec<(usize, usize, f64)> = (0..sh.c)
        .flat_map(|ch| (0..so.h).flat_map(move |i| (0..so.w).map(move |j| (ch, i, j))))
        .map(|(ch, i, j)| (sh.slot(ch, 2 * i, 2 * j), so.slot(ch + pad, i, j), 1.0))
        .collect();
    let y = gather(s, &x, &moves)?;
    Ok((replicate(s, &y, so.region(), so.p())?, so))
}

/// Global average pooling, times `bound` (back to the network's units): channel `ch`'s mean
/// at slot `ch` (1 level).
pub fn avg_pool<S: SlotOps>(s: &mut S, x: &S::Ct, sh: &Shape, bound: f64) -> Result<S::Ct> {
    let x = s.ensure_levels(x, 1, sh.region())?;
    let y = rotate_sum(s, &x, sh.k, sh.w)?;
    let y = rotate_sum(s, &y, sh.row(), sh.h)?;
    let f = bound / (sh.h * sh.w) as f64;
    let moves: Vec<(usize, usize, f64)> = (0..sh.c).map(|ch| (sh.slot(ch, 0, 0), ch, f)).collect();
    gather(s, &y, &moves)
}

/// The FC layer's matrix on `n` slots by its diagonals: `d_k[i] = fc[i][(i + k) mod n]`.
pub fn fc_matrix(model: &Model, n: usize) -> Result<LinearTransform> {
    let c = model.last_channels();
    let mut diags: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
    for i in 0..CLASSES {
        for j in 0..c {
            let k = reduce(j as i64 - i as i64, n) as usize;
            diags
                .entry(k)
                .or_insert_with(|| vec![Complex64::new(0.0, 0.0); n])[i] =
                Complex64::new(model.fc[i * c + j], 0.0);
        }
    }
    Ok(LinearTransform::new(n, diags)?)
}

/// The FC layer on the pooled vector: logits at slots `0 .. 10` (1 level).
pub fn fc<S: SlotOps>(s: &mut S, x: &S::Ct, model: &Model, m: &LinearTransform) -> Result<S::Ct> {
    // The pooled vector is not periodic (channel means at slots 0 .. c).
    let n = s.slots();
    let x = s.ensure_levels(x, 1, n)?;
    let y = s.linear(&x, m)?;
    let mut bias = vec![0.0; s.slots()];
    bias[..CLASSES].copy_from_slice(&model.fc_bias);
    s.add_plain(&y, &bias)
}

/// The whole network on a packed image (values in units of `bound`, layout `sh`): the logits
/// at slots `0 .. 10`. `progress(done, total)` after each of the 19 activations and the head.
pub fn network<S: SlotOps>(
    s: &mut S,
    model: &Model,
    fc_m: &LinearTransform,
    x: &S::Ct,
    sh: &Shape,
    bound: f64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<S::Ct> {
    let total = 2 * model.blocks.len() + 2;
    let inv = 1.0 / bound;
    let (y, mut sh) = conv(s, x, sh, &model.stem, inv)?;
    let mut x = s.app_relu(&y, sh.region())?;
    progress(1, total);
    for (bi, b) in model.blocks.iter().enumerate() {
        let x_in = s.ensure_levels(&x, CONV_LEVELS, sh.region())?;
        let (y, sh1) = conv(s, &x_in, &sh, &b.conv1, inv)?;
        let y = s.app_relu(&y, sh1.region())?;
        progress(2 * bi + 2, total);
        let (y, sh2) = conv(s, &y, &sh1, &b.conv2, inv)?;
        let short = if b.downsamples() {
            shortcut(s, &x_in, &sh, b.conv1.cout)?.0
        } else {
            x_in
        };
        let y = s.add(&y, &short)?;
        x = s.app_relu(&y, sh2.region())?;
        sh = sh2;
        progress(2 * bi + 3, total);
    }
    let pooled = avg_pool(s, &x, &sh, bound)?;
    let out = fc(s, &pooled, model, fc_m)?;
    progress(total, total);
    Ok(out)
}

/// The input layout of a `side x side` image in `n` slots (gap 1, 3 channels).
pub fn input_shape(side: usize, n: usize) -> Result<Shape> {
    Shape::new(1, side, side, 3, n)
}
