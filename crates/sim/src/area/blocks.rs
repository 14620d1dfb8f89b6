//! The building blocks every unit is made of, at one node: modular and integer multipliers
//! (area as the square of the word width, the partial-product array), modular adders (linear
//! in the width), flip-flops and SRAM, with their energies per operation.

use super::tech::Technology;
use crate::error::SimError;

/// Areas (mm^2) and energies (pJ) of the building blocks at one node.
#[derive(Clone, Debug)]
pub struct Blocks<'a> {
    /// The technology constants.
    pub tech: &'a Technology,
    /// Technology node in nm.
    pub node_nm: f64,
    logic: f64,
    energy: f64,
    modmul_7: f64,
    modadd_7: f64,
    register_7: f64,
    auto_7: f64,
    xbar_7: f64,
    pitch_7: f64,
}

impl<'a> Blocks<'a> {
    /// The blocks of `tech` at `node_nm` (an error outside the node anchors).
    ///
    /// ```
    /// use tessera_sim::area::{blocks::Blocks, tech::Technology};
    /// let t = Technology::builtin().unwrap();
    /// let b = Blocks::new(&t, 7.0).unwrap();
    /// // Twice the word, four times the multiplier.
    /// assert!((b.modmul_mm2(64) / b.modmul_mm2(32) - 4.0).abs() < 1e-12);
    /// ```
    pub fn new(tech: &'a Technology, node_nm: f64) -> Result<Self, SimError> {
        tech.check_node(node_nm)?;
        let c = &tech.components;
        Ok(Blocks {
            tech,
            node_nm,
            logic: tech.logic_factor(node_nm)?,
            energy: tech.energy_factor(node_nm)?,
            modmul_7: c.modmul.area_mm2 / tech.logic_factor(c.modmul.node_nm)?,
            modadd_7: c.modadd.area_mm2 / tech.logic_factor(c.modadd.node_nm)?,
            register_7: c.register.area_um2_per_bit * 1e-6
                / tech.logic_factor(c.register.node_nm)?,
            auto_7: c.automorphism.area_mm2
                / (c.automorphism.lanes as f64
                    * c.automorphism.lanes as f64
                    * c.automorphism.bits as f64)
                / tech.logic_factor(c.automorphism.node_nm)?,
            xbar_7: c.crossbar.area_mm2
                / (c.crossbar.ports as f64 * c.crossbar.ports as f64 * c.crossbar.port_bits as f64)
                / tech.logic_factor(c.crossbar.node_nm)?,
            pitch_7: c.wire.pitch_nm * 1e-6 / tech.logic_factor(c.wire.node_nm)?.sqrt(),
        })
    }

    /// Logic area at this node relative to 7 nm.
    pub fn logic_factor(&self) -> f64 {
        self.logic
    }

    /// A `w`-bit modular multiplier.
    pub fn modmul_mm2(&self, w: u32) -> f64 {
        let b = self.tech.components.modmul.bits as f64;
        self.modmul_7 * (w as f64 / b).powi(2) * self.logic
    }

    /// A `w x w` integer multiplier (no reduction).
    pub fn intmul_mm2(&self, w: u32) -> f64 {
        self.modmul_mm2(w) * self.tech.components.intmul.fraction_of_modmul
    }

    /// A `w`-bit modular adder.
    pub fn modadd_mm2(&self, w: u32) -> f64 {
        let b = self.tech.components.modadd.bits as f64;
        self.modadd_7 * (w as f64 / b) * self.logic
    }

    /// `bits` flip-flops.
    pub fn register_mm2(&self, bits: f64) -> f64 {
        self.register_7 * bits * self.logic
    }

    /// Automorphism-unit area per lane^2 per bit.
    pub fn auto_mm2_per_lane2_bit(&self) -> f64 {
        self.auto_7 * self.logic
    }

    /// Switch area per port^2 per bit.
    pub fn switch_mm2_per_port2_bit(&self) -> f64 {
        self.xbar_7 * self.logic
    }

    /// Semi-global wire pitch in mm: the measured pitch carried with the linear dimension
    /// (the square root of the logic area factor).
    pub fn wire_pitch_mm(&self) -> f64 {
        self.pitch_7 * self.logic.sqrt()
    }

    /// SRAM area per MB (2^20 bytes) with `ports` ports per cell.
    pub fn sram_mm2_per_mb(&self, ports: u32) -> Result<f64, SimError> {
        let s = &self.tech.components.sram;
        let cell = self.tech.bitcell_um2(self.node_nm)? * 1e-6;
        let port = if ports >= 2 { s.dual_port_factor } else { 1.0 };
        Ok(8.0 * 1048576.0 * cell / s.array_efficiency * port)
    }

    /// Energy of one `w`-bit modular multiplication, pJ (three `w x w` products).
    pub fn modmul_pj(&self, w: u32) -> f64 {
        self.intmul_pj(w) / self.tech.components.intmul.fraction_of_modmul
    }

    /// Energy of one `w x w` integer multiplication, pJ.
    pub fn intmul_pj(&self, w: u32) -> f64 {
        self.tech.components.energy.mult32_pj * (w as f64 / 32.0).powi(2) * self.energy
    }

    /// Energy of one `w`-bit modular addition, pJ.
    pub fn modadd_pj(&self, w: u32) -> f64 {
        self.tech.components.energy.add32_pj * (w as f64 / 32.0) * self.energy
    }

    /// Energy of moving one bit in or out of an SRAM, pJ.
    pub fn sram_pj_per_bit(&self) -> f64 {
        self.tech.components.energy.sram_pj_per_bit * self.energy
    }
}

/// One predicted part: its area, its peak power, and how both were obtained.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Part {
    /// Area in mm^2.
    pub area_mm2: f64,
    /// Peak power in W (every block busy every cycle); `None`: not modelled.
    pub peak_w: Option<f64>,
    /// The formula in words, with its counts.
    pub basis: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_scale_with_width_and_node() {
        let t = Technology::builtin().unwrap();
        let b7 = Blocks::new(&t, 7.0).unwrap();
        let b28 = Blocks::new(&t, 28.0).unwrap();
        assert!((b7.modadd_mm2(64) / b7.modadd_mm2(32) - 2.0).abs() < 1e-12);
        assert!((b7.intmul_mm2(64) * 3.0 - b7.modmul_mm2(64)).abs() < 1e-15);
        assert!(b28.modmul_mm2(64) > 4.0 * b7.modmul_mm2(64));
        assert!(b28.sram_mm2_per_mb(1).unwrap() > b7.sram_mm2_per_mb(1).unwrap());
        assert_eq!(
            b7.sram_mm2_per_mb(2).unwrap(),
            2.0 * b7.sram_mm2_per_mb(1).unwrap()
        );
        assert!(b28.modmul_pj(64) > b7.modmul_pj(64));
        // The F1 base figure comes back at F1's own node.
        let b12 = Blocks::new(&t, 12.0).unwrap();
        assert!((b12.modmul_mm2(32) - 0.25 / 128.0).abs() < 1e-12);
        // The wire pitch comes back at its own node and widens with the node.
        assert!((b7.wire_pitch_mm() - 80e-6).abs() < 1e-15);
        assert!(b28.wire_pitch_mm() > 2.0 * b7.wire_pitch_mm());
    }
}
