//! NTT units from butterflies (one modular multiplier and two modular adders each), twist
//! multipliers and the buffers between stages.

use super::blocks::{Blocks, Part};
use super::spec::NttKind;
use crate::error::SimError;

/// One NTT unit of `lanes` coefficients per cycle over `points`-point transforms of
/// `w`-bit words, at `ghz`. `twist_generators`: OF-Twist's on-the-fly twisting-factor
/// multipliers (ark.md V-C), one more multiplier per lane.
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, ntt::ntt_unit, spec::NttKind, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let one = ntt_unit(&b, NttKind::FourStep, 128, 1 << 16, 64, false, 1.0).unwrap();
/// let two = ntt_unit(&b, NttKind::FourStep, 256, 1 << 16, 64, false, 1.0).unwrap();
/// assert!((two.area_mm2 / one.area_mm2 - 2.0).abs() < 1e-9);
/// ```
pub fn ntt_unit(
    b: &Blocks,
    kind: NttKind,
    lanes: usize,
    points: u64,
    w: u32,
    twist_generators: bool,
    ghz: f64,
) -> Result<Part, SimError> {
    let (e, n) = (lanes as f64, points as f64);
    if lanes < 2 || !lanes.is_power_of_two() || lanes as u64 > points / 2 {
        return Err(SimError::Unsupported(format!(
            "an NTT unit of {lanes} lanes for {points}-point transforms: the model needs a \
             power-of-two lane count from 2 to half the transform"
        )));
    }
    let (butterflies, mults, buffer_words, what) = match kind {
        NttKind::FourStep => (
            e / 2.0 * n.log2(),
            e * if twist_generators { 2.0 } else { 1.0 },
            e * n.sqrt(),
            "four-step",
        ),
        NttKind::Sdf => (e * (n / e).log2() + e / 2.0 * e.log2(), 2.0 * e, n, "SDF"),
    };
    let bf = b.modmul_mm2(w) + 2.0 * b.modadd_mm2(w);
    let buffer_mb = buffer_words * w as f64 / 8.0 / 1048576.0;
    let area = butterflies * bf + mults * b.modmul_mm2(w) + buffer_mb * b.sram_mm2_per_mb(2)?;
    let pj = butterflies * (b.modmul_pj(w) + 2.0 * b.modadd_pj(w))
        + mults * b.modmul_pj(w)
        + 2.0 * e * w as f64 * b.sram_pj_per_bit();
    Ok(Part {
        area_mm2: area,
        peak_w: Some(pj * 1e-12 * ghz * 1e9),
        basis: format!(
            "{what}: {butterflies:.0} butterflies + {mults:.0} multipliers ({w}-bit), \
             {buffer_mb:.3} MB two-port buffer"
        ),
    })
}
