//! BConv units: output-stationary MAC arrays (ark.md V-A). A MAC is an integer multiplier
//! with a double-width accumulator (adder and register); each lane reduces its outputs
//! with one modular multiplier.

use super::blocks::{Blocks, Part};

/// `count` BConv units of `lanes` lanes x `macs` MACs on `w`-bit words, at `ghz`.
///
/// ```
/// use tessera_sim::area::{bconv::bconv_units, blocks::Blocks, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let a = bconv_units(&b, 1, 256, 6, 64, 1.0).area_mm2;
/// assert!((bconv_units(&b, 1, 512, 6, 64, 1.0).area_mm2 / a - 2.0).abs() < 1e-9);
/// ```
pub fn bconv_units(b: &Blocks, count: usize, lanes: usize, macs: usize, w: u32, ghz: f64) -> Part {
    let lanes_total = (count * lanes) as f64;
    let n_macs = lanes_total * macs as f64;
    let mac = b.intmul_mm2(w) + b.modadd_mm2(2 * w) + b.register_mm2(2.0 * w as f64);
    let area = n_macs * mac + lanes_total * b.modmul_mm2(w);
    let pj = n_macs * (b.intmul_pj(w) + b.modadd_pj(2 * w)) + lanes_total * b.modmul_pj(w);
    Part {
        area_mm2: area,
        peak_w: Some(pj * 1e-12 * ghz * 1e9),
        basis: format!(
            "{n_macs:.0} MACs ({w}x{w} multiplier, {}-bit accumulator) + {lanes_total:.0} \
             reducing multipliers",
            2 * w
        ),
    }
}
