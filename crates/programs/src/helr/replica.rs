//! HELR's plaintext replica: workloads.md 2.3's NAG update in f64, the computation the
//! encrypted program must reproduce.

use super::dataset::Dataset;
use super::he::Model;

/// The degree-3 least-squares sigmoid of HELR on [-16, 16], `s(x) ~ sigma(-x)`:
/// `0.5 - 0.0843 x + 0.0002 x^3` (coefficients c0, c1, c3).
pub const SIGMOID: [f64; 3] = [0.5, -0.0843, 0.0002];

/// NAG's momentum schedule: `(eta_t, ...)` for `t = 0..iterations`, from
/// `a0 = 0.01, a1 = (1 + sqrt(1 + 4 a0^2)) / 2`, `eta = (1 - a0) / a1`, then `a0 <- a1`.
pub fn etas(iterations: usize) -> Vec<f64> {
    let next = |a: f64| (1.0 + (1.0 + 4.0 * a * a).sqrt()) / 2.0;
    let (mut a0, mut a1) = (0.01, next(0.01));
    (0..iterations)
        .map(|_| {
            let eta = (1.0 - a0) / a1;
            a0 = a1;
            a1 = next(a0);
            eta
        })
        .collect()
}

/// Trains for `iterations` on mini-batches of `m` rows (block `t mod blocks` at iteration
/// `t`, `gamma = 1 / m`) with NAG and returns the weights `w` (one per slot of a row).
/// `model` ([`Model`]) says what a row contributes: `gamma s(<z, v>) z` for a logistic model
/// with the odd cubic `s` (learning rate 1), `-rate gamma e (1, x)` with the residual
/// `e = <z, v>` for a linear one (whose weights start at `-1` in the target slot).
pub fn train(ds: &Dataset, m: usize, iterations: usize, model: &Model) -> Vec<f64> {
    let gamma = 1.0 / m as f64;
    let width = ds.width();
    let (mut w, mut v) = (model.initial(width), model.initial(width));
    for (t, eta) in etas(iterations).into_iter().enumerate() {
        let z = ds.block(t % ds.blocks(m), m);
        let mut g = vec![0.0; width];
        for row in &z {
            let ip: f64 = row.iter().zip(&v).map(|(a, b)| a * b).sum();
            match *model {
                Model::Logistic([c0, c1, c3]) => {
                    let s = c0 + c1 * ip + c3 * ip * ip * ip;
                    for (gj, zj) in g.iter_mut().zip(row) {
                        *gj += gamma * s * zj;
                    }
                }
                Model::Linear { target, rate } => {
                    for (j, (gj, zj)) in g.iter_mut().zip(row).enumerate() {
                        if j != target {
                            *gj -= rate * gamma * ip * zj;
                        }
                    }
                }
            }
        }
        let tmp: Vec<f64> = v.iter().zip(&g).map(|(a, b)| a + b).collect();
        v = tmp
            .iter()
            .zip(&w)
            .map(|(t, w)| (1.0 - eta) * t + eta * w)
            .collect();
        w = tmp;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_schedule_starts_as_nesterov() {
        let e = etas(3);
        let a1 = (1.0 + (1.0 + 4.0 * 0.0001f64).sqrt()) / 2.0;
        assert!((e[0] - 0.99 / a1).abs() < 1e-15);
        assert!(e[1] < 0.0 && e[2] < e[1]);
    }

    /// Separable toy data: the replica's weights classify it.
    #[test]
    fn trains_on_separable_rows() {
        let mut rows = Vec::new();
        for i in 0..64 {
            let y = if i % 2 == 0 { 1.0 } else { -1.0 };
            let mut row = vec![0.0; 256];
            row[0] = y;
            row[1] = y * (0.5 + 0.5 * y);
            rows.push(row);
        }
        let test_x: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| r.iter().map(|v| v * r[0]).collect())
            .collect();
        let test_y = (0..64).map(|i| u8::from(i % 2 == 0)).collect();
        let ds = Dataset {
            train: rows,
            test_x,
            test_y,
        };
        let w = train(&ds, 16, 8, &Model::Logistic(SIGMOID));
        assert_eq!(ds.accuracy(&w), 1.0);
    }
}
