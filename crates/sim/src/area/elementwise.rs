//! Element-wise units (ARK's MADUs, CiFHER's EFUs, REED's MAS units, H3's MAU array): one
//! modular multiplier and one modular adder per lane.

use super::blocks::{Blocks, Part};

/// `count` units of `lanes` lanes on `w`-bit words, at `ghz`; `adders` modular adders per
/// lane (1 for a multiply-add lane, 2 for a lane that also runs NTT butterflies).
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, elementwise::elementwise_units, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let a = elementwise_units(&b, 2, 256, 64, 1, 1.0).area_mm2;
/// assert!((elementwise_units(&b, 2, 512, 64, 1, 1.0).area_mm2 / a - 2.0).abs() < 1e-9);
/// ```
pub fn elementwise_units(
    b: &Blocks,
    count: usize,
    lanes: usize,
    w: u32,
    adders: u32,
    ghz: f64,
) -> Part {
    let n = (count * lanes) as f64;
    let a = adders as f64;
    let area = n * (b.modmul_mm2(w) + a * b.modadd_mm2(w));
    let pj = n * (b.modmul_pj(w) + a * b.modadd_pj(w));
    Part {
        area_mm2: area,
        peak_w: Some(pj * 1e-12 * ghz * 1e9),
        basis: format!("{n:.0} lanes of a {w}-bit modular multiplier and {adders} adder(s)"),
    }
}
