//! Automorphism units, in the two organisations the papers describe:
//! - transpose-based (F1, ARK, CiFHER): permutations built from transposes of
//!   `lanes x lanes` tiles, so the area grows as `lanes^2 x w` from the measured unit of
//!   components.toml;
//! - a pipelined shuffle tree (REED, reed.md 4.2 and Fig. 5): the `lanes` coefficients of one
//!   memory row are permuted pairwise, batch by batch, over `log2(lanes)` pipeline stages,
//!   "every stage [with] sufficient registers to hold N2 coefficients", so the area grows as
//!   `lanes x log2(lanes) x w`.

use super::blocks::{Blocks, Part};
use super::noc::butterfly_network;

/// `count` transpose-based automorphism units of `lanes` lanes on `w`-bit words, at `ghz`.
/// Energy: every word written into and read out of the transpose buffer once.
///
/// ```
/// use tessera_sim::area::{automorphism::auto_units, blocks::Blocks, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let a = auto_units(&b, 1, 128, 32, 1.0).area_mm2;
/// assert!((auto_units(&b, 2, 128, 32, 1.0).area_mm2 / a - 2.0).abs() < 1e-9);
/// ```
pub fn auto_units(b: &Blocks, count: usize, lanes: usize, w: u32, ghz: f64) -> Part {
    let l = lanes as f64;
    let area = count as f64 * b.auto_mm2_per_lane2_bit() * l * l * w as f64;
    let pj = count as f64 * 2.0 * l * w as f64 * b.sram_pj_per_bit();
    Part {
        area_mm2: area,
        peak_w: Some(pj * 1e-12 * ghz * 1e9),
        basis: format!("{count} x ({lanes} lanes)^2 x {w} bits"),
    }
}

/// `count` shuffle-tree automorphism units of `lanes` lanes on `w`-bit words (reed.md 4.2,
/// Fig. 5): `log2(lanes)` pipeline stages, each a row of `lanes` `w`-bit registers behind a
/// stage of pairwise exchanges (`lanes / 2` two-port switches, the butterfly network of
/// [`butterfly_network`]). No peak power: the technology has no cited energy per register bit.
///
/// ```
/// use tessera_sim::area::{automorphism::shuffle_tree_units, blocks::Blocks, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let a = shuffle_tree_units(&b, 1, 64, 54).area_mm2;
/// // Twice the lanes: twice the width and one stage more (6 -> 7), not four times.
/// let r = shuffle_tree_units(&b, 1, 128, 54).area_mm2 / a;
/// assert!((r - 2.0 * 7.0 / 6.0).abs() < 1e-9);
/// ```
pub fn shuffle_tree_units(b: &Blocks, count: usize, lanes: usize, w: u32) -> Part {
    let stages = lanes.max(2).ilog2() as f64;
    let registers = b.register_mm2(stages * lanes.max(2) as f64 * w as f64);
    let switches = butterfly_network(b, lanes, w);
    Part {
        area_mm2: count as f64 * (registers + switches.area_mm2),
        peak_w: None,
        basis: format!(
            "{count} x shuffle tree: {stages:.0} stages x {lanes} registers of {w} bits; {}",
            switches.basis
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::area::tech::Technology;

    #[test]
    fn shuffle_tree_is_registers_plus_a_butterfly_and_far_below_a_transpose_unit() {
        let t = Technology::builtin().unwrap();
        let b = Blocks::new(&t, 7.0).unwrap();
        let tree = shuffle_tree_units(&b, 1, 64, 54).area_mm2;
        let regs = b.register_mm2(6.0 * 64.0 * 54.0);
        let net = butterfly_network(&b, 64, 54).area_mm2;
        assert!((tree - regs - net).abs() < 1e-12);
        assert!((shuffle_tree_units(&b, 2, 64, 54).area_mm2 / tree - 2.0).abs() < 1e-12);
        // Linear-logarithmic in the lanes, against the transpose unit's square.
        for lanes in [64, 256, 1024] {
            let s = shuffle_tree_units(&b, 1, lanes, 32).area_mm2;
            let q = auto_units(&b, 1, lanes, 32, 1.0).area_mm2;
            assert!(s < q, "{lanes} lanes: tree {s} >= transpose {q}");
        }
        let b28 = Blocks::new(&t, 28.0).unwrap();
        assert!(shuffle_tree_units(&b28, 1, 64, 54).area_mm2 > 4.0 * tree);
    }
}
