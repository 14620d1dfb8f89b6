//! The CKKS encoder: the canonical embedding through the "special FFT".
//!
//! A message `z` of `s` complex slots (`s` a power of two, `s <= N/2`) is the polynomial
//! `m(X) = sum_k m'_k X^(k*gap)`, `gap = N/(2s)`, whose evaluations at `zeta^(5^j)`
//! (`zeta = exp(i*pi/N)`, `j < s`) are `z_j`. With `xi = zeta^gap = exp(2*pi*i/(4s))`:
//! `z_j = sum_(k<2s) m'_k xi^(k 5^j) = sum_(k<s) (m'_k + i m'_(k+s)) xi^(k 5^j)`, because
//! `xi^(s 5^j) = i^(5^j) = i`. So the `s` complex numbers `v_k = m'_k + i m'_(k+s)` and the slots
//! are related by an `s`-point transform with twiddles `xi^(k 5^j)`, which the special FFT
//! evaluates in `O(s log s)`. The automorphism `X -> X^(5^r)` then rotates the slots left by `r`
//! and `X -> X^(-1)` conjugates them. Sparse packing (`s < N/2`) places the coefficients `gap`
//! apart.
//!
//! Encoding scales by Delta and rounds to integers (`i128`); values are computed in double
//! precision, which bounds the encoding precision to about 2^-52 relative to the largest slot.

use crate::error::{CkksError, Result};
use num_complex::Complex64;
use std::f64::consts::PI;
use std::sync::{Arc, OnceLock};

/// Encoder for ring degree N.
#[derive(Clone, Debug)]
pub struct Encoder {
    n: usize,
    /// The special FFT's twiddles per slot count (index `log2 s`), made on first use: at
    /// 2^14 slots they are 2^16 complex exponentials, about 2 ms to compute, which a program
    /// encoding thousands of plaintexts would otherwise pay at each one.
    roots: Vec<OnceLock<Arc<Roots>>>,
}

/// Twiddles for an `s`-slot special FFT: `xi^t` for `t < 4s` and the rotation group `5^j mod 4s`.
#[derive(Debug)]
struct Roots {
    m: usize,
    xi: Vec<Complex64>,
    rot: Vec<usize>,
}

impl Roots {
    fn new(s: usize) -> Self {
        let m = 4 * s;
        let xi = (0..=m)
            .map(|t| Complex64::from_polar(1.0, 2.0 * PI * t as f64 / m as f64))
            .collect();
        let mut rot = Vec::with_capacity(s);
        let mut g = 1usize;
        for _ in 0..s.max(1) {
            rot.push(g);
            g = g * 5 % m;
        }
        Self { m, xi, rot }
    }
}

fn bit_reverse_permute(v: &mut [Complex64]) {
    let n = v.len();
    let bits = n.trailing_zeros();
    if bits == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if i < j {
            v.swap(i, j);
        }
    }
}

/// Coefficient side -> slots: `z_j = sum_k v_k xi^(k 5^j)`.
fn special_fft(v: &mut [Complex64], r: &Roots) {
    let s = v.len();
    bit_reverse_permute(v);
    let mut len = 2;
    while len <= s {
        let (lenh, lenq) = (len / 2, 4 * len);
        for i in (0..s).step_by(len) {
            for j in 0..lenh {
                let idx = (r.rot[j] % lenq) * (r.m / lenq);
                let u = v[i + j];
                let w = v[i + j + lenh] * r.xi[idx];
                v[i + j] = u + w;
                v[i + j + lenh] = u - w;
            }
        }
        len *= 2;
    }
}

/// Slots -> coefficient side: the exact inverse of [`special_fft`].
fn special_ifft(v: &mut [Complex64], r: &Roots) {
    let s = v.len();
    let mut len = s;
    while len >= 2 {
        let (lenh, lenq) = (len / 2, 4 * len);
        for i in (0..s).step_by(len) {
            for j in 0..lenh {
                let idx = (lenq - r.rot[j] % lenq) * (r.m / lenq);
                let u = v[i + j] + v[i + j + lenh];
                let w = (v[i + j] - v[i + j + lenh]) * r.xi[idx];
                v[i + j] = u;
                v[i + j + lenh] = w;
            }
        }
        len /= 2;
    }
    bit_reverse_permute(v);
    let inv = 1.0 / s as f64;
    for x in v.iter_mut() {
        *x *= inv;
    }
}

/// A matrix on `s` slots in diagonal form: `M x = sum_k d_k * rot_k(x)`, where `rot_k` rotates
/// left by `k` (`rot_k(x)_j = x_((j + k) mod s)`) and `*` is slot-wise. This is the form a
/// homomorphic linear transform evaluates (one plaintext product per diagonal, one rotation
/// per distinct `k`).
#[derive(Clone, Debug, PartialEq)]
pub struct DiagonalMatrix {
    /// Slots.
    pub s: usize,
    /// Non-zero diagonals by rotation `k < s`.
    pub diags: std::collections::BTreeMap<usize, Vec<Complex64>>,
}

impl DiagonalMatrix {
    /// `c` times the identity.
    pub fn scalar(s: usize, c: Complex64) -> Self {
        Self {
            s,
            diags: [(0usize, vec![c; s])].into_iter().collect(),
        }
    }

    fn add_diag(&mut self, k: usize, p: usize, v: Complex64) {
        let s = self.s;
        self.diags
            .entry(k % s)
            .or_insert_with(|| vec![Complex64::new(0.0, 0.0); s])[p] += v;
    }

    /// `self * other` (apply `other` first): diagonal `a + b` gathers `d_a * rot_a(e_b)`.
    pub fn mul(&self, other: &Self) -> Self {
        let s = self.s;
        let mut out = Self {
            s,
            diags: Default::default(),
        };
        for (&a, da) in &self.diags {
            for (&b, eb) in &other.diags {
                let k = (a + b) % s;
                let d = out
                    .diags
                    .entry(k)
                    .or_insert_with(|| vec![Complex64::new(0.0, 0.0); s]);
                for j in 0..s {
                    d[j] += da[j] * eb[(j + a) % s];
                }
            }
        }
        out.diags.retain(|_, d| d.iter().any(|z| z.norm() > 0.0));
        out
    }

    /// `M x` in the clear (the reference the homomorphic evaluation is tested against).
    pub fn apply(&self, x: &[Complex64]) -> Vec<Complex64> {
        let s = self.s;
        let mut y = vec![Complex64::new(0.0, 0.0); s];
        for (&k, d) in &self.diags {
            for j in 0..s {
                y[j] += d[j] * x[(j + k) % s];
            }
        }
        y
    }

    /// Multiplies every entry by `c`.
    pub fn scale(&mut self, c: Complex64) {
        for d in self.diags.values_mut() {
            for z in d.iter_mut() {
                *z *= c;
            }
        }
    }
}

/// The butterfly stages of the `s`-slot special FFT as diagonal matrices, in the order they
/// apply. Forward (`inverse == false`): the stages of `special_fft` after its bit reversal,
/// so their product `B` satisfies `special_fft(v) = B * bitrev(v)`. Inverse: the stages of
/// `special_ifft` before its bit reversal, with its `1/s` folded into the first stage, so
/// `special_ifft(z) = bitrev(B' z)`. SlotToCoeff evaluates `B` and CoeffToSlot `B'`: the bit
/// reversals cancel across the slot-wise EvalMod between them. Each stage has 3 diagonals
/// (rotations 0 and +-len/2).
pub fn special_fft_stages(s: usize, inverse: bool) -> Vec<DiagonalMatrix> {
    let r = Roots::new(s);
    let mut lens = Vec::new();
    let mut len = 2;
    while len <= s {
        lens.push(len);
        len *= 2;
    }
    if inverse {
        lens.reverse();
    }
    let one = Complex64::new(1.0, 0.0);
    let mut stages: Vec<DiagonalMatrix> = lens
        .iter()
        .map(|&len| {
            let (lenh, lenq) = (len / 2, 4 * len);
            let mut m = DiagonalMatrix {
                s,
                diags: Default::default(),
            };
            for i in (0..s).step_by(len) {
                for j in 0..lenh {
                    let (p, q) = (i + j, i + j + lenh);
                    if inverse {
                        let w = r.xi[(lenq - r.rot[j] % lenq) * (r.m / lenq)];
                        m.add_diag(0, p, one);
                        m.add_diag(lenh, p, one);
                        m.add_diag(s - lenh, q, w);
                        m.add_diag(0, q, -w);
                    } else {
                        let w = r.xi[(r.rot[j] % lenq) * (r.m / lenq)];
                        m.add_diag(0, p, one);
                        m.add_diag(lenh, p, w);
                        m.add_diag(s - lenh, q, one);
                        m.add_diag(0, q, -w);
                    }
                }
            }
            m
        })
        .collect();
    if inverse {
        if let Some(first) = stages.first_mut() {
            first.scale(Complex64::new(1.0 / s as f64, 0.0));
        }
    }
    stages
}

impl Encoder {
    /// An encoder for ring degree `n` (a power of two, 4 to 2^17).
    ///
    /// ```
    /// use tessera_ckks::encoder::Encoder;
    /// let enc = Encoder::new(16)?;
    /// let coeffs = enc.encode_real(&[1.0, 2.0, 3.0, 4.0], 4, 1e6)?;
    /// let real: Vec<f64> = coeffs.iter().map(|&c| c as f64).collect();
    /// let back = enc.decode(&real, 4, 1e6)?;
    /// assert!(back.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(z, x)| (z.re - x).abs() < 1e-4));
    /// // A ring degree that is not a power of two is refused with its allowed range.
    /// assert!(Encoder::new(12).is_err());
    /// # Ok::<(), tessera_ckks::CkksError>(())
    /// ```
    pub fn new(n: usize) -> Result<Self> {
        if !n.is_power_of_two() || !(4..=1 << 17).contains(&n) {
            return Err(CkksError::InvalidParameter {
                name: "N",
                value: n.to_string(),
                allowed: "a power of two from 4 to 2^17".into(),
            });
        }
        Ok(Self {
            n,
            roots: (0..n.trailing_zeros()).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The twiddles of the `slots`-slot special FFT (`slots` a power of two below `N`,
    /// which every caller has checked).
    fn roots(&self, slots: usize) -> Arc<Roots> {
        self.roots[slots.trailing_zeros() as usize]
            .get_or_init(|| Arc::new(Roots::new(slots)))
            .clone()
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    fn check(&self, what: &'static str, values: usize, slots: usize, scale: f64) -> Result<()> {
        if !slots.is_power_of_two() || slots > self.n / 2 {
            return Err(CkksError::InvalidParameter {
                name: "slots",
                value: slots.to_string(),
                allowed: format!("a power of two from 1 to N/2 = {}", self.n / 2),
            });
        }
        if values > slots {
            return Err(CkksError::TooManyValues {
                what,
                found: values,
                slots,
                max: self.n / 2,
            });
        }
        if !(scale.is_finite() && scale >= 1.0) {
            return Err(CkksError::InvalidParameter {
                name: "scale",
                value: scale.to_string(),
                allowed: "a finite number >= 1".into(),
            });
        }
        Ok(())
    }

    /// The checks of [`Encoder::encode`] on its arguments that need no encoding (slot count,
    /// number of values, scale, finite values): a shape-only context runs them too, so a
    /// message it accepts is one a computing context accepts up to the size of the encoded
    /// coefficients.
    pub fn check_message(&self, values: &[Complex64], slots: usize, scale: f64) -> Result<()> {
        self.check("encode", values.len(), slots, scale)?;
        if values
            .iter()
            .any(|z| !z.re.is_finite() || !z.im.is_finite())
        {
            return Err(CkksError::InvalidParameter {
                name: "values",
                value: "non-finite".into(),
                allowed: "finite complex numbers".into(),
            });
        }
        Ok(())
    }

    /// Integer coefficients (length N) of `round(Delta * m(X))` for the message `values`
    /// (padded with zeros to `slots`).
    pub fn encode(&self, values: &[Complex64], slots: usize, scale: f64) -> Result<Vec<i128>> {
        self.check_message(values, slots, scale)?;
        let mut v = vec![Complex64::new(0.0, 0.0); slots];
        v[..values.len()].copy_from_slice(values);
        special_ifft(&mut v, &self.roots(slots));
        let gap = self.n / (2 * slots);
        let mut coeffs = vec![0i128; self.n];
        let limit = 2f64.powi(120);
        for (k, z) in v.iter().enumerate() {
            for (idx, x) in [(k * gap, z.re), ((k + slots) * gap, z.im)] {
                let y = (x * scale).round();
                if y.abs() >= limit {
                    return Err(CkksError::InvalidParameter {
                        name: "scale * |value|",
                        value: format!("{:e}", y.abs()),
                        allowed: "below 2^120".into(),
                    });
                }
                coeffs[idx] = y as i128;
            }
        }
        Ok(coeffs)
    }

    /// Real messages: the imaginary parts are zero.
    pub fn encode_real(&self, values: &[f64], slots: usize, scale: f64) -> Result<Vec<i128>> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&z, slots, scale)
    }

    /// The `slots` values of the polynomial with (centered, real) coefficients `coeffs`,
    /// divided by `scale`.
    pub fn decode(&self, coeffs: &[f64], slots: usize, scale: f64) -> Result<Vec<Complex64>> {
        self.check("decode", 0, slots, scale)?;
        if coeffs.len() != self.n {
            return Err(CkksError::InvalidParameter {
                name: "coefficients",
                value: coeffs.len().to_string(),
                allowed: format!("exactly N = {}", self.n),
            });
        }
        let gap = self.n / (2 * slots);
        let mut v: Vec<Complex64> = (0..slots)
            .map(|k| Complex64::new(coeffs[k * gap], coeffs[(k + slots) * gap]) / scale)
            .collect();
        special_fft(&mut v, &self.roots(slots));
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pseudo(seed: u64, k: usize) -> f64 {
        let mut s = seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        s ^= s >> 33;
        s = s.wrapping_mul(0xff51_afd7_ed55_8ccd);
        s ^= s >> 33;
        (s as f64 / u64::MAX as f64) * 2.0 - 1.0
    }

    fn message(seed: u64, s: usize) -> Vec<Complex64> {
        (0..s)
            .map(|k| Complex64::new(pseudo(seed, 2 * k), pseudo(seed, 2 * k + 1)))
            .collect()
    }

    #[test]
    fn special_fft_matches_its_definition() {
        for s in [1usize, 2, 4, 8, 16, 64] {
            let r = Roots::new(s);
            let v = message(s as u64, s);
            let mut f = v.clone();
            special_fft(&mut f, &r);
            for (j, fj) in f.iter().enumerate() {
                let e = r.rot[j];
                let direct: Complex64 = v
                    .iter()
                    .enumerate()
                    .map(|(k, vk)| vk * r.xi[(k * e) % r.m])
                    .sum();
                assert!((fj - direct).norm() < 1e-9, "s = {s}, j = {j}");
            }
            special_ifft(&mut f, &r);
            for (a, b) in f.iter().zip(&v) {
                assert!((a - b).norm() < 1e-12);
            }
        }
    }

    #[test]
    fn fft_stages_compose_to_the_special_fft() {
        for s in [2usize, 4, 16, 64] {
            let v = message(7 + s as u64, s);
            // Forward: B * bitrev(v) == special_fft(v).
            let mut want = v.clone();
            special_fft(&mut want, &Roots::new(s));
            let mut x = v.clone();
            bit_reverse_permute(&mut x);
            for st in special_fft_stages(s, false) {
                assert!(st.diags.len() <= 3);
                x = st.apply(&x);
            }
            for (a, b) in x.iter().zip(&want) {
                assert!((a - b).norm() < 1e-9, "forward s = {s}");
            }
            // Inverse: bitrev(B' z) == special_ifft(z); merged stages give the same.
            let mut want = v.clone();
            special_ifft(&mut want, &Roots::new(s));
            let stages = special_fft_stages(s, true);
            let merged = stages
                .iter()
                .skip(1)
                .fold(stages[0].clone(), |acc, st| st.mul(&acc));
            let mut y = merged.apply(&v);
            bit_reverse_permute(&mut y);
            for (a, b) in y.iter().zip(&want) {
                assert!((a - b).norm() < 1e-9, "inverse s = {s}");
            }
        }
    }

    /// The encoded polynomial evaluated directly at zeta^(5^j) gives Delta * z_j.
    #[test]
    fn encoding_is_the_canonical_embedding() {
        for (n, s) in [(16usize, 8usize), (64, 32), (64, 4), (256, 16)] {
            let enc = Encoder::new(n).unwrap();
            let z = message(n as u64 + s as u64, s);
            let scale = 2f64.powi(30);
            let c = enc.encode(&z, s, scale).unwrap();
            for (j, zj) in z.iter().enumerate() {
                let mut e = 1usize;
                for _ in 0..j {
                    e = e * 5 % (2 * n);
                }
                let value: Complex64 = c
                    .iter()
                    .enumerate()
                    .map(|(i, &ci)| {
                        Complex64::from_polar(ci as f64, PI * ((i * e) % (2 * n)) as f64 / n as f64)
                    })
                    .sum();
                let err = (value / scale - zj).norm();
                assert!(err < n as f64 / scale, "n = {n}, s = {s}, j = {j}: {err}");
            }
        }
    }

    #[test]
    fn rotation_automorphism_shifts_slots() {
        // m(X^5) has slots z_(j+1): apply X -> X^5 to the coefficients and decode.
        let (n, s) = (64usize, 32usize);
        let enc = Encoder::new(n).unwrap();
        let z = message(7, s);
        let c = enc.encode(&z, s, 2f64.powi(40)).unwrap();
        let mut rotated = vec![0f64; n];
        for (i, &ci) in c.iter().enumerate() {
            let e = i * 5 % (2 * n);
            if e < n {
                rotated[e] += ci as f64;
            } else {
                rotated[e - n] -= ci as f64;
            }
        }
        let d = enc.decode(&rotated, s, 2f64.powi(40)).unwrap();
        for j in 0..s {
            assert!((d[j] - z[(j + 1) % s]).norm() < 1e-9);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Round trip through integer coefficients: error below N / Delta per slot.
        #[test]
        fn round_trip_precision(log_n in 4u32..=13, log_s_gap in 0u32..4, log_scale in 25u32..55, seed in any::<u64>()) {
            let n = 1usize << log_n;
            let s = (n / 2) >> log_s_gap.min(log_n - 2);
            let enc = Encoder::new(n).unwrap();
            let z = message(seed, s);
            let scale = 2f64.powi(log_scale as i32);
            let c = enc.encode(&z, s, scale).unwrap();
            let cf: Vec<f64> = c.iter().map(|&x| x as f64).collect();
            let d = enc.decode(&cf, s, scale).unwrap();
            let max_err = z.iter().zip(&d).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
            // Rounding each of 2s coefficients by at most 1/2 moves a slot by at most s / Delta;
            // double precision adds about 2^-50 per slot.
            prop_assert!(max_err < (s as f64 + 1.0) / scale + 1e-12, "max error {max_err}");
        }
    }

    #[test]
    fn real_messages_have_real_slots() {
        let enc = Encoder::new(1 << 10).unwrap();
        let x: Vec<f64> = (0..512).map(|k| pseudo(3, k)).collect();
        let c = enc.encode_real(&x, 512, 2f64.powi(40)).unwrap();
        let d = enc
            .decode(
                &c.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                512,
                2f64.powi(40),
            )
            .unwrap();
        for (a, b) in x.iter().zip(&d) {
            assert!((a - b.re).abs() < 1e-9 && b.im.abs() < 1e-9);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(Encoder::new(12).is_err());
        let enc = Encoder::new(64).unwrap();
        let z = message(1, 40);
        assert!(matches!(
            enc.encode(&z, 32, 1e9),
            Err(CkksError::TooManyValues { .. })
        ));
        assert!(enc.encode(&z[..3], 3, 1e9).is_err());
        assert!(enc.encode(&z[..3], 64, 1e9).is_err());
        assert!(enc.encode(&z[..3], 4, f64::NAN).is_err());
        assert!(enc
            .encode(&[Complex64::new(f64::INFINITY, 0.0)], 4, 1e9)
            .is_err());
        assert!(enc.encode(&[Complex64::new(1e30, 0.0)], 4, 1e9).is_err());
        assert!(enc.decode(&[0.0; 10], 4, 1e9).is_err());
    }
}
