//! Off-chip memory PHYs and die-to-die PHYs: analog and bump-limited, so their area follows
//! the interface (stacks, bandwidth), not the logic node.

use super::blocks::{Blocks, Part};

/// `stacks` HBM PHYs moving `gbs` GB/s in all (power: the cited energy per bit of HBM,
/// DRAM access included).
pub fn hbm_phys(b: &Blocks, stacks: usize, gbs: f64) -> Part {
    let p = &b.tech.components.phy;
    Part {
        area_mm2: stacks as f64 * p.hbm_mm2_per_stack,
        peak_w: Some(gbs * 8e9 * p.hbm_pj_per_bit * 1e-12),
        basis: format!("{stacks} HBM PHY(s) x {} mm2", p.hbm_mm2_per_stack),
    }
}

/// `ends` die-to-die PHY ends of `gbs` GB/s each at `gts` GT/s: bandwidth over the UCIe
/// bandwidth density at that rate (proportional to the rate up to the cited one). Power:
/// the cited energy per bit, charged once per link (at the sending end).
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, phy::d2d_phys, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let a = d2d_phys(&b, 2, 1000.0, 16.0).area_mm2;
/// assert!((d2d_phys(&b, 4, 1000.0, 16.0).area_mm2 / a - 2.0).abs() < 1e-12);
/// assert!(d2d_phys(&b, 2, 1000.0, 32.0).area_mm2 < a);
/// ```
pub fn d2d_phys(b: &Blocks, ends: usize, gbs: f64, gts: f64) -> Part {
    let d = &b.tech.components.d2d;
    let density = d.gb_s_per_mm2 * (gts / d.at_gts).min(1.0);
    Part {
        area_mm2: ends as f64 * gbs / density,
        peak_w: Some(ends as f64 / 2.0 * gbs * 8e9 * d.pj_per_bit * 1e-12),
        basis: format!("{ends} link ends x {gbs} GB/s at {density:.0} GB/s/mm2 ({gts} GT/s)"),
    }
}
