//! On-chip networks: crossbars and routers whose area grows as ports^2 x port width, from
//! the measured crossbar of components.toml; multistage networks of 2 x 2 switches (a lane
//! interconnect); semi-global wires as tracks at the node's pitch.

use super::blocks::{Blocks, Part};

/// `count` switches of `ports` ports, `port_bits` bits wide each.
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, noc::switches, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 12.0).unwrap();
/// // The measured crossbar comes back at its own node.
/// assert!((switches(&b, 1, 16, 4096.0).area_mm2 - 3.34).abs() < 1e-9);
/// ```
pub fn switches(b: &Blocks, count: usize, ports: usize, port_bits: f64) -> Part {
    let p = ports as f64;
    Part {
        area_mm2: count as f64 * b.switch_mm2_per_port2_bit() * p * p * port_bits,
        peak_w: None,
        basis: format!("{count} switch(es) of {ports} ports x {port_bits:.0} bits"),
    }
}

/// A butterfly network over `lanes` lanes of `w`-bit words: `log2(lanes)` stages of
/// `lanes / 2` two-port switches, each a 2 x 2 crossbar of the measured kind. The minimal
/// network that exchanges words at every power-of-two stride, as an NTT stage or an
/// automorphism on a lane array needs (h3.md 4.3: the lane interconnection path).
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, noc::butterfly_network, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 28.0).unwrap();
/// let a = butterfly_network(&b, 256, 36).area_mm2;
/// // Twice the lanes: twice the switches per stage and one stage more (8 -> 9).
/// let r = butterfly_network(&b, 512, 36).area_mm2 / a;
/// assert!((r - 2.0 * 9.0 / 8.0).abs() < 1e-9);
/// ```
pub fn butterfly_network(b: &Blocks, lanes: usize, w: u32) -> Part {
    let stages = lanes.max(2).ilog2() as usize;
    let per_stage = lanes.max(2) / 2;
    let p = switches(b, stages * per_stage, 2, w as f64);
    Part {
        basis: format!(
            "butterfly network: {stages} stages x {per_stage} switches of 2 ports x {w} bits"
        ),
        ..p
    }
}

/// `count` semi-global wires of `length_mm` each: one routing track per wire at the node's
/// pitch, the area the tracks take from the layers above the logic.
///
/// ```
/// use tessera_sim::area::{blocks::Blocks, noc::wires, tech::Technology};
/// let t = Technology::builtin().unwrap();
/// let b = Blocks::new(&t, 7.0).unwrap();
/// // 1,000 wires of 10 mm at 80 nm pitch: 0.8 mm2.
/// assert!((wires(&b, 1000.0, 10.0).area_mm2 - 0.8).abs() < 1e-9);
/// ```
pub fn wires(b: &Blocks, count: f64, length_mm: f64) -> Part {
    let pitch = b.wire_pitch_mm();
    Part {
        area_mm2: count * pitch * length_mm,
        peak_w: None,
        basis: format!(
            "{count:.0} wires x {length_mm:.2} mm at {:.0} nm pitch",
            pitch * 1e6
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::area::tech::Technology;

    #[test]
    fn networks_grow_with_lanes_width_length_and_node() {
        let t = Technology::builtin().unwrap();
        let (b7, b28) = (
            Blocks::new(&t, 7.0).unwrap(),
            Blocks::new(&t, 28.0).unwrap(),
        );
        let mut prev = 0.0;
        for lanes in [16, 64, 256, 1024] {
            let a = butterfly_network(&b7, lanes, 32).area_mm2;
            assert!(a > prev, "not increasing at {lanes} lanes");
            prev = a;
        }
        let a = butterfly_network(&b7, 256, 32).area_mm2;
        assert!((butterfly_network(&b7, 256, 64).area_mm2 / a - 2.0).abs() < 1e-12);
        assert!(butterfly_network(&b28, 256, 32).area_mm2 > 4.0 * a);
        let w = wires(&b7, 1000.0, 5.0).area_mm2;
        assert!((wires(&b7, 2000.0, 5.0).area_mm2 / w - 2.0).abs() < 1e-12);
        assert!((wires(&b7, 1000.0, 10.0).area_mm2 / w - 2.0).abs() < 1e-12);
        assert!(wires(&b28, 1000.0, 5.0).area_mm2 > 2.0 * w);
    }
}
