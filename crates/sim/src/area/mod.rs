//! Predictive area, power and cost (issue 25, item 4): a design's area and peak power follow
//! from its description (lanes, word width, SRAM capacity, interconnect, PHYs, technology
//! node) through a component model per unit kind, with every constant a cited hardware
//! parameter (`configs/tech/*.toml`) and none fitted to a design's total. The copied
//! component tables of the machine descriptions stay as an input, labelled as such; the
//! calibrated designs' published totals are targets ([`targets`]).
//!
//! ```
//! use tessera_sim::{area, machine::Machine};
//! let p = area::predict(&Machine::load("ark").unwrap()).unwrap();
//! assert!(p.total_area_mm2 > 100.0 && p.total_area_mm2 < 1000.0);
//! assert!(p.components.iter().any(|c| c.name == "NTT units"));
//! ```

pub mod automorphism;
pub mod bconv;
pub mod blocks;
pub mod elementwise;
pub mod noc;
pub mod ntt;
pub mod phy;
pub mod spec;
pub mod sram;
pub mod targets;
pub mod tech;

use crate::arch::Arch;
use crate::cofhee::PeMachine;
use crate::cost::PackageCost;
use crate::error::SimError;
use crate::machine::{Activity, Component, Machine, Per, Topology};
use blocks::{Blocks, Part};
use serde::Serialize;
use spec::{AreaSpec, AutKind, OffchipPhy};
use tech::Technology;

/// One predicted component of a design.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ComponentPrediction {
    /// Its name.
    pub name: String,
    /// Area in mm^2.
    pub area_mm2: f64,
    /// Peak power in W; `None` where the model has no energy for it.
    pub peak_w: Option<f64>,
    /// How it is built from the cited constants.
    pub basis: String,
}

/// A part of the design the model cannot predict, and why.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NotModelled {
    /// Its name.
    pub name: String,
    /// Why it is not modelled.
    pub reason: String,
}

/// A design's predicted area, peak power and cost.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AreaPowerPrediction {
    /// The machine.
    pub arch: String,
    /// Technology node in nm.
    pub node_nm: f64,
    /// Component by component.
    pub components: Vec<ComponentPrediction>,
    /// Components the model leaves out.
    pub not_modelled: Vec<NotModelled>,
    /// Predicted total area in mm^2.
    pub total_area_mm2: f64,
    /// Sum of the components' peak powers (those without one count 0).
    pub total_peak_w: f64,
    /// This package's yield and cost at the predicted area (machines with a cost model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<PackageCost>,
    /// Where the constants come from.
    pub basis: &'static str,
}

/// What every prediction says about its constants.
pub const BASIS: &str = "predicted: component model of crates/sim/src/area with the cited \
    constants of configs/tech/components.toml and nodes.toml (none fitted to a design's total)";

/// The label of the copied component tables of a machine description.
pub const INPUT_LABEL: &str = "input: paper's table";

/// The label of a report's area when it is this model's prediction: the description has no
/// component table to override it.
pub const PREDICTED_LABEL: &str = "predicted (the description has no component table)";

/// `m` with its predicted components as its component table, for a description that has no
/// copied table: per cluster, each with the activity its energy follows, so reports of such a
/// design carry its predicted area, peak power, energy and cost. `None` when `m` has a table
/// (which then overrides the prediction), no `[area]` section, or nothing predicted.
pub fn with_predicted_components(m: &Machine) -> Option<Machine> {
    if !m.components.is_empty() {
        return None;
    }
    let p = predict(m).ok()?;
    if p.components.is_empty() {
        return None;
    }
    let k = m.chip.clusters as f64;
    let mut out = m.clone();
    out.components = p
        .components
        .iter()
        .map(|c| Component {
            name: c.name.clone(),
            area_mm2: c.area_mm2 / k,
            peak_w: c.peak_w.unwrap_or(0.0) / k,
            count: 1.0,
            per: Per::Cluster,
            activity: activity_of(m, &c.name),
            cite: BASIS.to_string(),
        })
        .collect();
    Some(out)
}

/// What a predicted component's energy follows. Memories and links whose energy the
/// description charges per bit (`pj_per_bit`) get none here, so it is not counted twice.
fn activity_of(m: &Machine, name: &str) -> Activity {
    let per_bit_off = m.memory.offchip.pj_per_bit > 0.0;
    let per_bit_noc = m.memory.noc.pj_per_bit > 0.0;
    match name {
        "NTT units" => Activity::Ntt,
        "MAU arrays" => Activity::Ntt,
        "BConv units" => Activity::Bconv,
        "Automorphism units" => Activity::Auto,
        "Element-wise units" => Activity::Madu,
        "Scratchpad" => Activity::Scratchpad,
        "Register files" => Activity::RegisterFile,
        "HBM PHYs" | "I/O dies" if !per_bit_off => Activity::Offchip,
        "NoC" | "NoC wires" | "Routers" | "Die-to-die PHYs" if !per_bit_noc => Activity::Noc,
        "Lane interconnect" => Activity::Auto,
        _ => Activity::None,
    }
}

struct Builder {
    components: Vec<ComponentPrediction>,
    not_modelled: Vec<NotModelled>,
}

impl Builder {
    fn add(&mut self, name: &str, p: Part) {
        if p.area_mm2 > 0.0 || p.peak_w.is_some_and(|w| w > 0.0) {
            self.components.push(ComponentPrediction {
                name: name.to_string(),
                area_mm2: p.area_mm2,
                peak_w: p.peak_w,
                basis: p.basis,
            });
        }
    }

    fn skip(&mut self, name: &str, reason: &str) {
        self.not_modelled.push(NotModelled {
            name: name.to_string(),
            reason: reason.to_string(),
        });
    }

    fn finish(
        self,
        arch: &str,
        node_nm: f64,
        package: impl Fn(f64) -> Option<PackageCost>,
    ) -> AreaPowerPrediction {
        let area: f64 = self.components.iter().map(|c| c.area_mm2).sum();
        AreaPowerPrediction {
            arch: arch.to_string(),
            node_nm,
            total_peak_w: self.components.iter().filter_map(|c| c.peak_w).sum(),
            package: package(area),
            total_area_mm2: area,
            components: self.components,
            not_modelled: self.not_modelled,
            basis: BASIS,
        }
    }
}

fn spec_of<'a>(spec: &'a Option<AreaSpec>, name: &str) -> Result<&'a AreaSpec, SimError> {
    spec.as_ref().ok_or_else(|| {
        SimError::Unsupported(format!(
            "area prediction for '{name}': its description has no [area] section (node_nm, \
             offchip_phy, ...; see docs/simulator.md, \"Predicted area\")"
        ))
    })
}

/// [`predict_with`] the built-in technology.
pub fn predict(m: &Machine) -> Result<AreaPowerPrediction, SimError> {
    predict_with(m, &Technology::builtin()?)
}

/// The predicted area and peak power of vector machine `m` in technology `tech`.
pub fn predict_with(m: &Machine, tech: &Technology) -> Result<AreaPowerPrediction, SimError> {
    let spec = spec_of(&m.area, &m.name)?;
    spec.validate(tech)?;
    let b = Blocks::new(tech, spec.node_nm)?;
    let (w, ghz, k) = (m.clock.word_bits, m.clock.ghz, m.chip.clusters);
    let u = &m.units;
    let mut out = Builder {
        components: Vec::new(),
        not_modelled: Vec::new(),
    };
    let per_chip = |p: Part| Part {
        area_mm2: p.area_mm2 * k as f64,
        peak_w: p.peak_w.map(|x| x * k as f64),
        basis: format!("{k} x ({})", p.basis),
    };
    if m.options.unified_mau {
        // One array of modular-arithmetic lanes runs everything (h3.md 4.3): each lane a
        // multiplier and the two adders of a butterfly.
        out.add(
            "MAU arrays",
            per_chip(elementwise::elementwise_units(
                &b,
                u.madu.count,
                u.madu.elements_per_cycle,
                w,
                2,
                ghz,
            )),
        );
        // The lanes exchange words through a lane interconnect for the NTT's strides and
        // for permutations (h3.md 4.3, Fig. 7a: shuffles between lanes, then pair exchanges).
        out.add(
            "Lane interconnect",
            per_chip(noc::butterfly_network(&b, u.madu.elements_per_cycle, w)),
        );
    } else {
        let points = spec.ntt_points.ok_or_else(|| SimError::Field {
            origin: String::new(),
            line: None,
            name: "area.ntt_points".into(),
            value: "absent".into(),
            allowed: "the ring degree the NTT unit is built for (a power of two), required \
                      for a machine with NTT units"
                .into(),
        })?;
        let one = ntt::ntt_unit(
            &b,
            spec.ntt,
            u.ntt.elements_per_cycle,
            points,
            w,
            m.options.of_twist,
            spec.sdf_delay,
            ghz,
        )?;
        let n = (u.ntt.count * k) as f64;
        out.add(
            "NTT units",
            Part {
                area_mm2: one.area_mm2 * n,
                peak_w: one.peak_w.map(|x| x * n),
                basis: format!("{n} x ({})", one.basis),
            },
        );
        if u.bconv.count > 0 {
            out.add(
                "BConv units",
                per_chip(bconv::bconv_units(
                    &b,
                    u.bconv.count,
                    u.bconv.lanes,
                    u.bconv.macs_per_lane,
                    w,
                    ghz,
                )),
            );
        }
        let (count, lanes) = (u.auto.count, u.auto.elements_per_cycle);
        out.add(
            "Automorphism units",
            per_chip(match spec.automorphism {
                AutKind::Transpose => automorphism::auto_units(&b, count, lanes, w, ghz),
                AutKind::ShuffleTree => automorphism::shuffle_tree_units(&b, count, lanes, w),
            }),
        );
        out.add(
            "Element-wise units",
            per_chip(elementwise::elementwise_units(
                &b,
                u.madu.count,
                u.madu.elements_per_cycle,
                w,
                1,
                ghz,
            )),
        );
    }
    out.skip("PRNG", "no cited figure for a PRNG lane");
    memories(m, spec, &b, &mut out)?;
    interconnect(m, spec, &b, &mut out)?;
    Ok(out.finish(&m.name, spec.node_nm, |a| {
        m.cost.as_ref().map(|c| c.package(a, m.die_count()))
    }))
}

/// Scratchpad, register file and off-chip PHYs.
fn memories(m: &Machine, spec: &AreaSpec, b: &Blocks, out: &mut Builder) -> Result<(), SimError> {
    let sp = &m.memory.scratchpad;
    match sp.capacity_mb {
        Some(_) => out.add(
            "Scratchpad",
            sram::sram(b, m.scratchpad_mb(), spec.scratchpad_ports, m.total_gbs(sp))?,
        ),
        None => out.skip(
            "Scratchpad",
            "capacity not given (memory.scratchpad.capacity_mb)",
        ),
    }
    if !spec.register_file_shared {
        match spec.register_file_mb {
            Some(mb) => out.add(
                "Register files",
                sram::sram(b, mb, 1, m.total_gbs(&m.memory.register_file))?,
            ),
            None => out.skip(
                "Register files",
                "capacity not stated by the design (area.register_file_mb)",
            ),
        }
    }
    for s in &spec.extra_srams {
        out.add(&s.name, sram::sram(b, s.kb / 1024.0, s.ports, 0.0)?);
    }
    let off = &m.memory.offchip;
    match spec.offchip_phy {
        OffchipPhy::Hbm if off.io_dies == 0 => {
            out.add("HBM PHYs", phy::hbm_phys(b, off.stacks, m.total_gbs(off)))
        }
        OffchipPhy::Hbm => {} // on the I/O dies: see `interconnect`
        OffchipPhy::HybridBond => out.skip(
            "Memory controllers and DRAM interface",
            "no cited area for a hybrid-bonding DRAM interface",
        ),
        OffchipPhy::Ddr => out.skip("DDR PHYs", "no cited area for a DDR PHY"),
        OffchipPhy::None => {}
    }
    Ok(())
}

/// Predicted components at the die's edge rather than inside a cluster.
const AT_THE_EDGE: [&str; 1] = ["HBM PHYs"];

/// Routers or crossbars (with a crossbar's wires), die-to-die PHYs and I/O dies.
fn interconnect(
    m: &Machine,
    spec: &AreaSpec,
    b: &Blocks,
    out: &mut Builder,
) -> Result<(), SimError> {
    let k = m.chip.clusters;
    if k < 2 {
        return Ok(());
    }
    let noc = &m.memory.noc;
    let bits_per_cycle = |gbs: f64| gbs / m.clock.ghz * 8.0;
    let net = m.net();
    let multi_die = m.die_count() > 1;
    if noc.topology == Topology::Crossbar {
        // One shared network: a crossbar of `k` ports sharing the bandwidth.
        let bits = bits_per_cycle(m.total_gbs(noc));
        // A cluster's units and memories (the PHYs at the die's edge excluded).
        let cluster_mm2 = out
            .components
            .iter()
            .filter(|c| !AT_THE_EDGE.contains(&c.name.as_str()))
            .map(|c| c.area_mm2)
            .sum::<f64>()
            / k as f64;
        out.add("NoC", noc::switches(b, 1, k, bits / k as f64));
        if !multi_die {
            // Its wires join the same lane of every cluster (ark.md VI-A), so each bit of
            // the network is a track running from one cluster to the next: one cluster's
            // side, the square root of its area.
            out.add("NoC wires", noc::wires(b, bits, cluster_mm2.sqrt()));
        }
    } else {
        // A router per cluster: one port per link it drives (or `router_ports` on every
        // cluster: identical chiplets), plus the local port.
        let degree = router_ports(m, spec)?;
        let p = degree
            .iter()
            .map(|d| noc::switches(b, 1, d + 1, bits_per_cycle(noc.bandwidth_gbs)).area_mm2);
        let area: f64 = p.sum();
        let ports = match spec.router_ports {
            Some(n) => format!("{n} link ports + 1, identical chiplets"),
            None => "(links + 1) ports".to_string(),
        };
        out.add(
            "Routers",
            Part {
                area_mm2: area,
                peak_w: None,
                basis: format!(
                    "{k} routers of {ports} x {:.0} bits",
                    bits_per_cycle(noc.bandwidth_gbs)
                ),
            },
        );
    }
    if !multi_die {
        if noc.topology != Topology::Crossbar {
            out.skip(
                "NoC wires",
                "a mesh's links join adjacent routers over the tiles: no wire area counted",
            );
        }
        return Ok(());
    }
    let Some(gts) = spec.d2d_gts else {
        out.skip("Die-to-die PHYs", "no data rate given (area.d2d_gts)");
        return Ok(());
    };
    let core_links = (0..net.len())
        .filter(|&i| net.edges[i].0 < k && net.edges[i].1 < k)
        .count();
    // Each directed core-to-core link has a sending and a receiving end; identical chiplets
    // have a sending and a receiving end on each of every cluster's ports, the ports to the
    // I/O dies included.
    let core_ends = match spec.router_ports {
        Some(p) => 2 * p * k,
        None => 2 * core_links,
    };
    out.add(
        "Die-to-die PHYs",
        phy::d2d_phys(b, core_ends, noc.bandwidth_gbs, gts),
    );
    let io_links = net.len() - core_links;
    if io_links > 0 {
        let off = &m.memory.offchip;
        let hbm = phy::hbm_phys(b, off.stacks, m.total_gbs(off));
        // The I/O dies route nothing but their stacks' traffic, so their links to the cores
        // carry, each way, at most the off-chip bandwidth: a PHY wider than what feeds it is
        // never used. Each link's PHY is sized for its share of that (`io_links` counts
        // both directions), or for the link's bandwidth where that is less.
        let per_link = io_link_gbs(noc.bandwidth_gbs, m.total_gbs(off), io_links);
        // The I/O dies hold the HBM PHYs and their ends of the links to the cores; the
        // cores' ends are counted there too (the cores' own PHYs are above), unless the
        // cores are identical chiplets, whose ports to the I/O dies are among their own.
        let io_ends = if spec.router_ports.is_some() {
            io_links
        } else {
            2 * io_links
        };
        let d2d = phy::d2d_phys(b, io_ends, per_link, gts);
        out.add(
            "I/O dies",
            Part {
                area_mm2: hbm.area_mm2 + d2d.area_mm2,
                peak_w: Some(hbm.peak_w.unwrap_or(0.0) + d2d.peak_w.unwrap_or(0.0)),
                basis: format!("{}; {}", hbm.basis, d2d.basis),
            },
        );
    }
    Ok(())
}

/// Link ports of each cluster's router: the links it drives, or `area.router_ports` on every
/// cluster (identical chiplets), which must hold the busiest cluster's links.
fn router_ports(m: &Machine, spec: &AreaSpec) -> Result<Vec<usize>, SimError> {
    let k = m.chip.clusters;
    let net = m.net();
    let mut degree = vec![0usize; k];
    for i in 0..net.len() {
        let (s, _) = net.edges[i];
        if s < k {
            degree[s] += 1;
        }
    }
    let Some(p) = spec.router_ports else {
        return Ok(degree);
    };
    let busiest = degree.iter().copied().max().unwrap_or(0);
    if p < busiest {
        return Err(SimError::Field {
            origin: String::new(),
            line: None,
            name: "area.router_ports".into(),
            value: p.to_string(),
            allowed: format!(
                "at least {busiest}, the links of the busiest cluster of this network"
            ),
        });
    }
    Ok(vec![p; k])
}

/// The bandwidth each of `io_links` directed links between I/O dies and cores is built for:
/// the link's own `link_gbs`, or its share of the off-chip bandwidth `offchip_gbs` (which
/// every direction carries at most) where that is less.
///
/// ```
/// use tessera_sim::area::io_link_gbs;
/// // 16 directed links (8 each way) of 1 TB/s behind 1 TB/s of HBM: 125 GB/s each.
/// assert_eq!(io_link_gbs(1000.0, 1000.0, 16), 125.0);
/// // Links slower than their share stay at their own bandwidth.
/// assert_eq!(io_link_gbs(100.0, 1000.0, 4), 100.0);
/// ```
pub fn io_link_gbs(link_gbs: f64, offchip_gbs: f64, io_links: usize) -> f64 {
    let each_way = (io_links as f64 / 2.0).max(1.0);
    link_gbs.min(offchip_gbs / each_way)
}

/// The predicted area and peak power of single-PE machine `m` (CoFHEE): the PE's modular
/// multiplier and adders, its dual- and single-port SRAMs, and the description's other SRAMs.
pub fn predict_pe_with(m: &PeMachine, tech: &Technology) -> Result<AreaPowerPrediction, SimError> {
    let spec = spec_of(&m.area, &m.name)?;
    spec.validate(tech)?;
    let b = Blocks::new(tech, spec.node_nm)?;
    let w = m.clock.word_bits;
    let ghz = m.clock.mhz / 1e3;
    let mut out = Builder {
        components: Vec::new(),
        not_modelled: Vec::new(),
    };
    out.add("PE", elementwise::elementwise_units(&b, 1, 1, w, 2, ghz));
    let mb = m.memory.sram_words as f64 * w as f64 / 8.0 / 1048576.0;
    let bw = |ports: f64| ports * w as f64 / 8.0 * ghz;
    out.add(
        "Dual-port SRAMs",
        sram::sram(&b, mb * m.memory.dual_port_srams as f64, 2, bw(2.0))?,
    );
    out.add(
        "Single-port SRAMs",
        sram::sram(&b, mb * m.memory.single_port_srams as f64, 1, bw(1.0))?,
    );
    for s in &spec.extra_srams {
        out.add(&s.name, sram::sram(&b, s.kb / 1024.0, s.ports, 0.0)?);
    }
    out.skip(
        "Controllers, bus and peripherals",
        "no cited figure for a microcontroller, bus or peripheral block",
    );
    Ok(out.finish(&m.name, spec.node_nm, |_| None))
}

/// The prediction for a machine of either kind, with the built-in technology.
pub fn predict_arch(a: &Arch) -> Result<AreaPowerPrediction, SimError> {
    let t = Technology::builtin()?;
    match a {
        Arch::Vector(m) => predict_with(m, &t),
        Arch::Pe(m) => predict_pe_with(m, &t),
    }
}
