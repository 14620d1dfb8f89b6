//! Automorphism units: permutations built from transposes of `lanes x lanes` tiles, so the
//! area grows as `lanes^2 x w` from the measured unit of components.toml.

use super::blocks::{Blocks, Part};

/// `count` automorphism units of `lanes` lanes on `w`-bit words, at `ghz`. Energy: every
/// word written into and read out of the transpose buffer once.
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
