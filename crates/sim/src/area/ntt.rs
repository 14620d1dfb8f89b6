//! NTT units from butterflies (one modular multiplier and two modular adders each), twist
//! multipliers and the buffers between stages.

use super::blocks::{Blocks, Part};
use super::spec::{DelayLines, NttKind};
use crate::error::SimError;

/// One NTT unit of `lanes` coefficients per cycle over `points`-point transforms of
/// `w`-bit words, at `ghz`. `twist_generators`: OF-Twist's on-the-fly twisting-factor
/// multipliers (ark.md V-C), one more multiplier per lane. `delay`: what an SDF unit's
/// `N` words of delay lines are built of (a four-step unit's buffer is always SRAM).
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, ntt::ntt_unit, spec::{DelayLines, NttKind}, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let sram = DelayLines::Sram;
/// let one = ntt_unit(&b, NttKind::FourStep, 128, 1 << 16, 64, false, sram, 1.0).unwrap();
/// let two = ntt_unit(&b, NttKind::FourStep, 256, 1 << 16, 64, false, sram, 1.0).unwrap();
/// assert!((two.area_mm2 / one.area_mm2 - 2.0).abs() < 1e-9);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn ntt_unit(
    b: &Blocks,
    kind: NttKind,
    lanes: usize,
    points: u64,
    w: u32,
    twist_generators: bool,
    delay: DelayLines,
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
    let buffer_bits = buffer_words * w as f64;
    let buffer_mb = buffer_bits / 8.0 / 1048576.0;
    let logic_pj = butterflies * (b.modmul_pj(w) + 2.0 * b.modadd_pj(w)) + mults * b.modmul_pj(w);
    // A four-step unit's transpose buffer is always SRAM; an SDF unit's delay lines are what
    // the description says.
    let registers = kind == NttKind::Sdf && delay == DelayLines::Registers;
    let (buffer_mm2, buffer_pj, buffer_what) = if registers {
        // No cited energy per register bit (configs/tech): the delay lines' power is left
        // out, as the shuffle tree's is.
        (
            b.register_mm2(buffer_bits),
            0.0,
            "flip-flop delay lines (their power not modelled)",
        )
    } else {
        (
            buffer_mb * b.sram_mm2_per_mb(2)?,
            2.0 * e * w as f64 * b.sram_pj_per_bit(),
            "two-port buffer",
        )
    };
    let area = butterflies * bf + mults * b.modmul_mm2(w) + buffer_mm2;
    let pj = logic_pj + buffer_pj;
    Ok(Part {
        area_mm2: area,
        peak_w: Some(pj * 1e-12 * ghz * 1e9),
        basis: format!(
            "{what}: {butterflies:.0} butterflies + {mults:.0} multipliers ({w}-bit), \
             {buffer_mb:.3} MB {buffer_what}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::area::tech::Technology;

    /// REED 1024x64's unit (reed.md 4.1): SDF delay lines as flip-flops cost `N w` register
    /// bits instead of `N w` two-port SRAM bits, and nothing else changes.
    #[test]
    fn sdf_delay_lines_as_registers_replace_only_the_buffer() {
        let t = Technology::builtin().unwrap();
        for node in [7.0, 28.0] {
            let b = Blocks::new(&t, node).unwrap();
            let unit = |kind, d| ntt_unit(&b, kind, 64, 1 << 16, 54, false, d, 1.5).unwrap();
            let (sram, regs) = (
                unit(NttKind::Sdf, DelayLines::Sram),
                unit(NttKind::Sdf, DelayLines::Registers),
            );
            let bits = 65536.0 * 54.0;
            let sram_buf = bits / 8.0 / 1048576.0 * b.sram_mm2_per_mb(2).unwrap();
            let diff = regs.area_mm2 - sram.area_mm2;
            assert!(
                (diff - (b.register_mm2(bits) - sram_buf)).abs() < 1e-9,
                "{node} nm"
            );
            // Flip-flops are larger than two-port SRAM cells at both nodes.
            assert!(diff > 0.0, "{node} nm");
            assert!(regs.basis.contains("flip-flop"), "{}", regs.basis);
            assert!(regs.peak_w.unwrap() < sram.peak_w.unwrap());
            // A four-step unit's buffer is SRAM whatever the delay-line setting.
            let f = |d| unit(NttKind::FourStep, d).area_mm2;
            assert_eq!(f(DelayLines::Sram), f(DelayLines::Registers));
        }
    }
}
