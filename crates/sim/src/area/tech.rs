//! The technology of the predictive model: base figures of the building blocks
//! (`configs/tech/components.toml`) and node scaling (`configs/tech/nodes.toml`), every
//! number a hardware parameter with a citation. Quantities between two node anchors follow a
//! power law of the node (a straight line on log-log axes); a node outside the anchors is
//! refused, never extrapolated.

use crate::error::SimError;
use crate::limits::{between, positive, MAX_QUANTITY};
use serde::{Deserialize, Serialize};

/// The built-in base figures.
pub const COMPONENTS: &str = include_str!("../../../../configs/tech/components.toml");
/// The built-in node anchors.
pub const NODES: &str = include_str!("../../../../configs/tech/nodes.toml");

/// A block measured at one node: `area_mm2` for a `bits`-wide instance.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// Word width in bits of the measured circuit.
    pub bits: u32,
    /// Its area in mm^2.
    pub area_mm2: f64,
    /// The node it was measured at, in nm.
    pub node_nm: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// The integer multiplier as a fraction of the modular one.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntMul {
    /// Area of an integer multiplier as a fraction of a modular one.
    pub fraction_of_modmul: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// One flip-flop bit.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Register {
    /// Register area per bit in um^2.
    pub area_um2_per_bit: f64,
    /// The node it was measured at, in nm.
    pub node_nm: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// The automorphism unit measured at `lanes` x `bits`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Automorphism {
    /// Area of the measured automorphism unit in mm^2.
    pub area_mm2: f64,
    /// Its lanes.
    pub lanes: u32,
    /// Its word width in bits.
    pub bits: u32,
    /// Its node in nm.
    pub node_nm: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// A crossbar measured at `ports` x `port_bits`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crossbar {
    /// Area of the measured crossbar in mm^2.
    pub area_mm2: f64,
    /// Its ports.
    pub ports: u32,
    /// Bits per port.
    pub port_bits: u32,
    /// Its node in nm.
    pub node_nm: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Semi-global wires: one routing track per bit, at a pitch measured at one node.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wire {
    /// Track pitch in nm.
    pub pitch_nm: f64,
    /// The node it was measured at, in nm.
    pub node_nm: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// SRAM macro constants.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sram {
    /// Fraction of an SRAM macro that is bit cells.
    pub array_efficiency: f64,
    /// Area of a two-port macro relative to a one-port one.
    pub dual_port_factor: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Off-chip memory PHYs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phy {
    /// HBM PHY area per stack in mm^2.
    pub hbm_mm2_per_stack: f64,
    /// HBM interface energy in pJ per bit.
    pub hbm_pj_per_bit: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Die-to-die PHYs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct D2d {
    /// Die-to-die bandwidth density in GB/s per mm^2.
    pub gb_s_per_mm2: f64,
    /// At this signalling rate, in GT/s.
    pub at_gts: f64,
    /// Energy in pJ per bit.
    pub pj_per_bit: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// Energies per operation at one node and supply.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Energy {
    /// The node of the energy figures, in nm.
    pub node_nm: f64,
    /// Supply voltage at that node.
    pub vdd: f64,
    /// A 32-bit multiply in pJ.
    pub mult32_pj: f64,
    /// A 32-bit add in pJ.
    pub add32_pj: f64,
    /// An SRAM access in pJ per bit.
    pub sram_pj_per_bit: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// `configs/tech/components.toml`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Components {
    /// A modular multiplier.
    pub modmul: Measured,
    /// An integer multiplier.
    pub intmul: IntMul,
    /// A modular adder.
    pub modadd: Measured,
    /// Registers.
    pub register: Register,
    /// An automorphism unit.
    pub automorphism: Automorphism,
    /// A crossbar.
    pub crossbar: Crossbar,
    /// Semi-global wires.
    pub wire: Wire,
    /// SRAM macros.
    pub sram: Sram,
    /// Off-chip PHYs.
    pub phy: Phy,
    /// Die-to-die links.
    pub d2d: D2d,
    /// Energy per operation.
    pub energy: Energy,
}

/// One anchor of a node-scaled quantity.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// The node in nm.
    pub node_nm: f64,
    #[serde(alias = "factor", alias = "um2", alias = "volts")]
    /// The value at this node.
    pub value: f64,
    /// Where the values come from (paper, section or table).
    pub cite: String,
}

/// `configs/tech/nodes.toml`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    /// Logic area scaling by node.
    pub logic_area: Vec<Anchor>,
    /// SRAM bit-cell area by node.
    pub bitcell: Vec<Anchor>,
    /// Supply voltage by node.
    pub vdd: Vec<Anchor>,
}

/// Base figures and node scaling together.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Technology {
    /// The measured components (configs/tech/components.toml).
    pub components: Components,
    /// Scaling across nodes (configs/tech/nodes.toml).
    pub nodes: Nodes,
}

fn parse<T: serde::de::DeserializeOwned>(text: &str, origin: &str) -> Result<T, SimError> {
    toml::from_str(text).map_err(|e| SimError::Config {
        origin: origin.to_string(),
        message: e.to_string(),
    })
}

impl Technology {
    /// The technology shipped in `configs/tech`.
    ///
    /// ```
    /// let t = tessera_sim::area::tech::Technology::builtin().unwrap();
    /// // Logic at 28 nm takes several times the area it takes at 7 nm.
    /// assert!(t.logic_factor(28.0).unwrap() > 4.0);
    /// ```
    pub fn builtin() -> Result<Self, SimError> {
        // Parsed once: every report predicts its machine's area.
        static BUILTIN: std::sync::OnceLock<Result<Technology, String>> =
            std::sync::OnceLock::new();
        BUILTIN
            .get_or_init(|| Self::from_toml(COMPONENTS, NODES).map_err(|e| e.to_string()))
            .clone()
            .map_err(|message| SimError::Config {
                origin: "configs/tech".into(),
                message,
            })
    }

    /// Parses and checks both files: every figure positive and finite, every anchor list
    /// non-empty with distinct nodes.
    pub fn from_toml(components: &str, nodes: &str) -> Result<Self, SimError> {
        let t = Technology {
            components: parse(components, "configs/tech/components.toml")?,
            nodes: parse(nodes, "configs/tech/nodes.toml")?,
        };
        t.validate()
            .map_err(|e| crate::limits::locate(e, "configs/tech", None))?;
        Ok(t)
    }

    fn validate(&self) -> Result<(), SimError> {
        let c = &self.components;
        let q = MAX_QUANTITY;
        for (name, v) in [
            ("modmul.area_mm2", c.modmul.area_mm2),
            ("modmul.node_nm", c.modmul.node_nm),
            ("modadd.area_mm2", c.modadd.area_mm2),
            ("modadd.node_nm", c.modadd.node_nm),
            ("register.area_um2_per_bit", c.register.area_um2_per_bit),
            ("register.node_nm", c.register.node_nm),
            ("automorphism.area_mm2", c.automorphism.area_mm2),
            ("automorphism.node_nm", c.automorphism.node_nm),
            ("crossbar.area_mm2", c.crossbar.area_mm2),
            ("crossbar.node_nm", c.crossbar.node_nm),
            ("wire.pitch_nm", c.wire.pitch_nm),
            ("wire.node_nm", c.wire.node_nm),
            ("sram.dual_port_factor", c.sram.dual_port_factor),
            ("phy.hbm_mm2_per_stack", c.phy.hbm_mm2_per_stack),
            ("phy.hbm_pj_per_bit", c.phy.hbm_pj_per_bit),
            ("d2d.gb_s_per_mm2", c.d2d.gb_s_per_mm2),
            ("d2d.at_gts", c.d2d.at_gts),
            ("d2d.pj_per_bit", c.d2d.pj_per_bit),
            ("energy.node_nm", c.energy.node_nm),
            ("energy.vdd", c.energy.vdd),
            ("energy.mult32_pj", c.energy.mult32_pj),
            ("energy.add32_pj", c.energy.add32_pj),
            ("energy.sram_pj_per_bit", c.energy.sram_pj_per_bit),
        ] {
            positive(name, v, q)?;
        }
        for (name, v) in [
            ("modmul.bits", c.modmul.bits),
            ("modadd.bits", c.modadd.bits),
            ("automorphism.bits", c.automorphism.bits),
            ("automorphism.lanes", c.automorphism.lanes),
            ("crossbar.ports", c.crossbar.ports),
            ("crossbar.port_bits", c.crossbar.port_bits),
        ] {
            positive(name, v as f64, q)?;
        }
        between("sram.array_efficiency", c.sram.array_efficiency, 0.01, 1.0)?;
        between(
            "intmul.fraction_of_modmul",
            c.intmul.fraction_of_modmul,
            0.01,
            1.0,
        )?;
        for (name, list) in [
            ("logic_area", &self.nodes.logic_area),
            ("bitcell", &self.nodes.bitcell),
            ("vdd", &self.nodes.vdd),
        ] {
            if list.is_empty() {
                return Err(SimError::Invalid {
                    name: "configs/tech/nodes.toml",
                    value: format!("no [[{name}]] anchor"),
                    allowed: "at least one anchor per quantity".into(),
                });
            }
            for (i, a) in list.iter().enumerate() {
                positive(&format!("{name}[{i}].node_nm"), a.node_nm, 1e4)?;
                positive(&format!("{name}[{i}].value"), a.value, q)?;
                if list[..i].iter().any(|b| b.node_nm == a.node_nm) {
                    return Err(SimError::Invalid {
                        name: "configs/tech/nodes.toml",
                        value: format!("two [[{name}]] anchors at {} nm", a.node_nm),
                        allowed: "one anchor per node".into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Logic area at `node_nm` relative to 7 nm.
    pub fn logic_factor(&self, node_nm: f64) -> Result<f64, SimError> {
        interpolate(&self.nodes.logic_area, node_nm, "logic_area")
    }

    /// High-density SRAM bit cell at `node_nm`, in um^2.
    pub fn bitcell_um2(&self, node_nm: f64) -> Result<f64, SimError> {
        interpolate(&self.nodes.bitcell, node_nm, "bitcell")
    }

    /// Nominal supply at `node_nm`, in V.
    pub fn vdd(&self, node_nm: f64) -> Result<f64, SimError> {
        interpolate(&self.nodes.vdd, node_nm, "vdd")
    }

    /// The nodes every quantity covers: `(smallest, largest)`.
    pub fn node_range(&self) -> (f64, f64) {
        let span = |l: &[Anchor]| {
            l.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), a| {
                (lo.min(a.node_nm), hi.max(a.node_nm))
            })
        };
        let (a, b, c) = (
            span(&self.nodes.logic_area),
            span(&self.nodes.bitcell),
            span(&self.nodes.vdd),
        );
        (a.0.max(b.0).max(c.0), a.1.min(b.1).min(c.1))
    }

    /// Checks that `node_nm` is within every quantity's anchors.
    pub fn check_node(&self, node_nm: f64) -> Result<(), SimError> {
        let (lo, hi) = self.node_range();
        if node_nm.is_finite() && (lo..=hi).contains(&node_nm) {
            Ok(())
        } else {
            Err(SimError::Field {
                origin: String::new(),
                line: None,
                name: "area.node_nm".into(),
                value: node_nm.to_string(),
                allowed: format!(
                    "a node from {lo} to {hi} nm (the range the anchors of configs/tech/nodes.toml cover)"
                ),
            })
        }
    }

    /// Dynamic energy at `node_nm` relative to the node and supply the energies of
    /// components.toml were measured at: `C V^2`, with `C` following the linear dimension
    /// (the square root of the logic area factor).
    pub fn energy_factor(&self, node_nm: f64) -> Result<f64, SimError> {
        let e = &self.components.energy;
        let c = (self.logic_factor(node_nm)? / self.logic_factor(e.node_nm)?).sqrt();
        let v = self.vdd(node_nm)? / e.vdd;
        Ok(c * v * v)
    }
}

/// `anchors` at `node`: exact at an anchor, a power law between the two around it, an error
/// outside them.
fn interpolate(anchors: &[Anchor], node: f64, what: &str) -> Result<f64, SimError> {
    let mut sorted: Vec<&Anchor> = anchors.iter().collect();
    sorted.sort_by(|a, b| a.node_nm.total_cmp(&b.node_nm));
    if let Some(a) = sorted.iter().find(|a| a.node_nm == node) {
        return Ok(a.value);
    }
    for w in sorted.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.node_nm < node && node < b.node_nm {
            let t = (node / a.node_nm).ln() / (b.node_nm / a.node_nm).ln();
            return Ok(a.value * (b.value / a.value).powf(t));
        }
    }
    let (lo, hi) = (
        sorted.first().map_or(0.0, |a| a.node_nm),
        sorted.last().map_or(0.0, |a| a.node_nm),
    );
    Err(SimError::Field {
        origin: String::new(),
        line: None,
        name: "area.node_nm".into(),
        value: node.to_string(),
        allowed: format!(
            "a node from {lo} to {hi} nm (the [[{what}]] anchors of configs/tech/nodes.toml)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_anchors_are_exact() {
        let t = Technology::builtin().unwrap();
        assert_eq!(t.logic_factor(7.0).unwrap(), 1.0);
        assert_eq!(t.logic_factor(55.0).unwrap(), 16.7);
        assert_eq!(t.bitcell_um2(7.0).unwrap(), 0.027);
        assert_eq!(t.vdd(55.0).unwrap(), 1.2);
    }

    #[test]
    fn node_scaling_is_monotone() {
        let t = Technology::builtin().unwrap();
        let (lo, hi) = t.node_range();
        let mut prev = (0.0, 0.0);
        let mut n = lo;
        while n <= hi {
            let (l, b) = (t.logic_factor(n).unwrap(), t.bitcell_um2(n).unwrap());
            assert!(l > prev.0 && b > prev.1, "not increasing at {n} nm");
            prev = (l, b);
            n += 0.5;
        }
        assert!(t.energy_factor(7.0).unwrap() < t.energy_factor(28.0).unwrap());
        assert!(t.energy_factor(28.0).unwrap() < t.energy_factor(55.0).unwrap());
    }

    #[test]
    fn nodes_outside_the_anchors_are_refused_by_name() {
        let t = Technology::builtin().unwrap();
        for bad in [3.0, 90.0, f64::NAN, -7.0] {
            let e = t.check_node(bad).unwrap_err().to_string();
            assert!(e.contains("area.node_nm") && e.contains("nm"), "{e}");
        }
        assert!(t.logic_factor(100.0).is_err());
    }

    #[test]
    fn bad_technology_values_are_clear_errors() {
        let bad = COMPONENTS.replace("array_efficiency = 0.5", "array_efficiency = 1.5");
        let e = Technology::from_toml(&bad, NODES).unwrap_err().to_string();
        assert!(e.contains("sram.array_efficiency"), "{e}");
        let bad = COMPONENTS.replace("mult32_pj = 3.1", "mult32_pj = -3.1");
        let e = Technology::from_toml(&bad, NODES).unwrap_err().to_string();
        assert!(e.contains("energy.mult32_pj"), "{e}");
        let dup = format!("{NODES}\n[[vdd]]\nnode_nm = 7.0\nvolts = 0.8\ncite = \"x\"\n");
        let e = Technology::from_toml(COMPONENTS, &dup)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one anchor per node"), "{e}");
        let e = Technology::from_toml("x = 1", NODES)
            .unwrap_err()
            .to_string();
        assert!(e.contains("components.toml"), "{e}");
    }
}
