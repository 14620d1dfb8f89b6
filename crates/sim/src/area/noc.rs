//! On-chip networks: crossbars and routers whose area grows as ports^2 x port width, from
//! the measured crossbar of components.toml. Wire area (semi-global routing) is not modelled.

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
