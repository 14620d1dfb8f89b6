//! SRAM arrays by capacity and ports: bit cells over the array efficiency; power from the
//! bandwidth the machine description gives.

use super::blocks::{Blocks, Part};
use crate::error::SimError;

/// `mb` MB of SRAM with `ports` ports, moving `gbs` GB/s at peak.
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, sram::sram, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// let one = sram(&b, 1.0, 1, 0.0).unwrap().area_mm2;
/// assert!((sram(&b, 2.0, 1, 0.0).unwrap().area_mm2 / one - 2.0).abs() < 1e-12);
/// assert!(sram(&b, 1.0, 2, 0.0).unwrap().area_mm2 > one);
/// ```
pub fn sram(b: &Blocks, mb: f64, ports: u32, gbs: f64) -> Result<Part, SimError> {
    let area = mb * b.sram_mm2_per_mb(ports)?;
    Ok(Part {
        area_mm2: area,
        peak_w: Some(gbs * 8e9 * b.sram_pj_per_bit() * 1e-12),
        basis: format!(
            "{mb:.4} MB x {:.3} mm2/MB ({ports} port(s), {:.4} um2 cells)",
            b.sram_mm2_per_mb(ports)?,
            b.tech.bitcell_um2(b.node_nm)?
        ),
    })
}
