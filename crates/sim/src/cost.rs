//! Die yield and manufacturing cost: chiplet packages against one monolithic die of the same
//! logic (reed.md section 3.1 and Fig. 11).
//!
//! Yield follows the negative-binomial model `Y(A) = (1 + A D0 / alpha)^-alpha` (defects
//! cluster, alpha the clustering parameter). Cost per good die is the wafer cost over the
//! dies per wafer, divided by the yield; a package adds an interposer and pays a bonding
//! yield per die (known-good dies are assembled, so a die's own yield is paid once).

use serde::{Deserialize, Serialize};

/// Cost-model constants (a `[cost]` section of a machine description).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostModel {
    /// Defect density, per cm^2.
    pub defect_density_per_cm2: f64,
    /// Negative-binomial clustering parameter.
    pub clustering_alpha: f64,
    /// Wafer diameter in mm.
    pub wafer_diameter_mm: f64,
    /// Processed wafer cost in USD.
    pub wafer_cost_usd: f64,
    /// Silicon interposer cost per mm^2 (chiplet packages only).
    pub interposer_cost_per_mm2: f64,
    /// Interposer area over the summed die area.
    pub interposer_area_ratio: f64,
    /// Probability that bonding one die succeeds.
    pub bond_yield: f64,
    /// Where the cost figures come from.
    pub cite: String,
}

/// Yield and cost of one package.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PackageCost {
    /// Dies in the package.
    pub dies: usize,
    /// Area of one die in mm^2.
    pub die_area_mm2: f64,
    /// Yield of one die.
    pub die_yield: f64,
    /// Probability that an assembled package works (bonding).
    pub assembly_yield: f64,
    /// Cost of one good package in USD.
    pub cost_per_good_package_usd: f64,
}

impl CostModel {
    /// Range checks ([`crate::limits`]): densities, costs and ratios finite and non-negative,
    /// the clustering parameter and wafer positive, the interposer at least as large as the
    /// dies it carries, and the bonding yield a probability in (0, 1].
    pub fn validate(&self) -> Result<(), crate::error::SimError> {
        use crate::limits::{between, fraction, non_negative, positive, MAX_QUANTITY};
        non_negative(
            "cost.defect_density_per_cm2",
            self.defect_density_per_cm2,
            1e3,
        )?;
        positive("cost.clustering_alpha", self.clustering_alpha, 1e3)?;
        positive("cost.wafer_diameter_mm", self.wafer_diameter_mm, 1e4)?;
        non_negative("cost.wafer_cost_usd", self.wafer_cost_usd, MAX_QUANTITY)?;
        non_negative(
            "cost.interposer_cost_per_mm2",
            self.interposer_cost_per_mm2,
            MAX_QUANTITY,
        )?;
        between(
            "cost.interposer_area_ratio",
            self.interposer_area_ratio,
            1.0,
            100.0,
        )?;
        fraction("cost.bond_yield", self.bond_yield)
    }

    /// `(1 + A D0 / alpha)^-alpha` for a die of `area_mm2`.
    pub fn die_yield(&self, area_mm2: f64) -> f64 {
        let d0 = self.defect_density_per_cm2 / 100.0;
        (1.0 + area_mm2 * d0 / self.clustering_alpha).powf(-self.clustering_alpha)
    }

    /// Whole dies of `area_mm2` on one wafer (the usual edge-loss approximation).
    pub fn dies_per_wafer(&self, area_mm2: f64) -> f64 {
        let d = self.wafer_diameter_mm;
        let pi = std::f64::consts::PI;
        (pi * d * d / (4.0 * area_mm2) - pi * d / (2.0 * area_mm2).sqrt()).max(0.0)
    }

    /// Cost of one good die of `area_mm2`.
    pub fn good_die_cost(&self, area_mm2: f64) -> f64 {
        let dpw = self.dies_per_wafer(area_mm2);
        if dpw < 1.0 {
            return f64::INFINITY;
        }
        self.wafer_cost_usd / dpw / self.die_yield(area_mm2)
    }

    /// `dies` identical dies sharing `total_area_mm2` of logic (1: monolithic, no
    /// interposer).
    ///
    /// ```
    /// use tessera_sim::machine::Machine;
    /// let ark = Machine::load("ark")?;
    /// let cost = ark.cost.as_ref().expect("ARK's description cites a cost model");
    /// let one = cost.package(400.0, 1);
    /// let four = cost.package(400.0, 4);
    /// // Smaller dies yield better.
    /// assert!(four.die_yield > one.die_yield && one.die_yield < 1.0);
    /// # Ok::<(), tessera_sim::SimError>(())
    /// ```
    pub fn package(&self, total_area_mm2: f64, dies: usize) -> PackageCost {
        let dies = dies.max(1);
        let a = total_area_mm2 / dies as f64;
        let dies_cost = dies as f64 * self.good_die_cost(a);
        let (interposer, assembly) = if dies > 1 {
            (
                self.interposer_cost_per_mm2 * self.interposer_area_ratio * total_area_mm2,
                self.bond_yield.powi(dies as i32),
            )
        } else {
            (0.0, 1.0)
        };
        PackageCost {
            dies,
            die_area_mm2: a,
            die_yield: self.die_yield(a),
            assembly_yield: assembly,
            cost_per_good_package_usd: (dies_cost + interposer) / assembly,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> CostModel {
        toml::from_str::<CostModel>(
            r#"
            defect_density_per_cm2 = 0.1158
            clustering_alpha = 3.0
            wafer_diameter_mm = 300.0
            wafer_cost_usd = 9346.0
            interposer_cost_per_mm2 = 0.01
            interposer_area_ratio = 1.1
            bond_yield = 0.99
            cite = "test"
            "#,
        )
        .unwrap()
    }

    /// The two points the defect density is fitted to (reed.md 3.1, from its [44]): an
    /// 800 mm^2 design in four dies yields about 80 %, in eight about 90 %.
    #[test]
    fn yield_reproduces_the_points_it_is_built_from() {
        let m = model();
        assert!(
            (m.die_yield(200.0) - 0.80).abs() < 0.005,
            "{}",
            m.die_yield(200.0)
        );
        assert!(
            (m.die_yield(100.0) - 0.90).abs() < 0.01,
            "{}",
            m.die_yield(100.0)
        );
        assert!(m.die_yield(800.0) < m.die_yield(200.0));
        assert!((m.die_yield(0.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn chiplets_are_cheaper_for_large_designs_and_not_for_small_ones() {
        let m = model();
        let mono = m.package(800.0, 1);
        let four = m.package(800.0, 4);
        assert!(four.cost_per_good_package_usd < mono.cost_per_good_package_usd);
        assert_eq!(mono.assembly_yield, 1.0);
        // A tiny design gains nothing from splitting: bonding and interposer cost more.
        let small_mono = m.package(20.0, 1);
        let small_four = m.package(20.0, 4);
        assert!(small_four.cost_per_good_package_usd > small_mono.cost_per_good_package_usd);
        // Dies per wafer: a 300 mm wafer holds about 640 dies of 100 mm^2.
        assert!((m.dies_per_wafer(100.0) - 640.0).abs() < 5.0);
    }
}
