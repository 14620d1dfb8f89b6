//! The primary functions on device polynomials: operand checks (the same typed errors as
//! `RnsPoly`), output allocation, and the kernel launches of each.

use crate::device::Buffer;
use crate::error::Result;
use crate::kernels::{self as k, Kernel, KernelSig};
use crate::poly::DevicePoly;
use crate::ring::{shoup_for, ConvTables, DeviceRing};
use std::sync::Arc;
use tessera_math::automorphism::{automorphism_permutation, galois_check};
use tessera_math::poly::check_operands;
use tessera_math::sampling::{expand_uniform, Seed};
use tessera_math::{ConversionMode, MathError, Representation, RnsPoly};

/// log2 of the largest NTT tile (`NTT_TILE_MAX` words in `kernels/ntt.cu`, 16 KB of shared
/// memory per block).
const NTT_TILE_BITS: u64 = 11;

/// The NTT's passes `(first stage, stages, log2 columns)` (see `kernels/ntt.cu`): one pass
/// when the whole polynomial fits a tile, else two (the first `log_n - 11` stages over tiles of
/// `2^(11 - stages)` columns, then the last 11 stages over runs of 2^11 consecutive words).
/// Two passes cover degrees up to 2^22.
fn ntt_passes(log_n: u64) -> Result<Vec<(u64, u64, u64)>> {
    if log_n <= NTT_TILE_BITS {
        return Ok(vec![(0, log_n, 0)]);
    }
    if log_n > 2 * NTT_TILE_BITS {
        return Err(MathError::Unsupported(format!(
            "CUDA backend: an NTT of degree 2^{log_n}; the GPU kernels support degrees up to \
             2^{}",
            2 * NTT_TILE_BITS
        ))
        .into());
    }
    let first = log_n - NTT_TILE_BITS;
    Ok(vec![
        (0, first, NTT_TILE_BITS - first),
        (first, NTT_TILE_BITS, 0),
    ])
}

impl DeviceRing {
    /// `kernel`'s variant for this ring's word size.
    fn k(&self, kernel: &'static Kernel) -> &'static KernelSig {
        kernel.variant(self.w32)
    }

    /// Launches the limb-wise kernel `kernel` (this ring's word size) with one thread per word
    /// of `limbs`: its leading arguments `head`, then what every such kernel takes last (the
    /// limbs' map to ring moduli, the moduli, log N and the word count).
    fn launch_limbwise(
        &self,
        kernel: &'static Kernel,
        limbs: &[usize],
        head: &[u64],
    ) -> Result<()> {
        let map = self.limb_map(limbs)?;
        let total = self.total(limbs.len());
        let mut args = Vec::with_capacity(head.len() + 4);
        args.extend_from_slice(head);
        args.extend([map.addr(), self.mods.addr(), self.log_n, total]);
        self.dev.launch(self.k(kernel), total, &args)
    }

    fn check_ring(&self, p: &DevicePoly, op: &'static str) -> Result<()> {
        if !Arc::ptr_eq(&p.ring, &self.ring) || !Arc::ptr_eq(p.buf.device(), &self.dev) {
            return Err(MathError::RingMismatch { op }.into());
        }
        Ok(())
    }

    /// Same ring, limbs and representation (and `need`, if given): `RnsPoly`'s checks.
    fn check_compatible(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        op: &'static str,
        need: Option<Representation>,
    ) -> Result<()> {
        self.check_ring(a, op)?;
        self.check_ring(b, op)?;
        check_operands(op, (&a.limbs, a.repr), (&b.limbs, b.repr), need, |l| {
            l.iter().map(|&i| self.ring.moduli()[i].value()).collect()
        })?;
        Ok(())
    }

    /// Distinct limb indices of this ring.
    fn check_limbs(&self, limbs: &[usize]) -> Result<()> {
        let count = self.ring.moduli().len();
        for (k, &i) in limbs.iter().enumerate() {
            if i >= count || limbs[..k].contains(&i) {
                return Err(MathError::OutOfRange {
                    name: "limb index",
                    value: i.to_string(),
                    allowed: format!("distinct indices below {count}"),
                }
                .into());
            }
        }
        Ok(())
    }

    /// A new polynomial over `limbs` (contents unspecified: every kernel writes all words).
    fn alloc(&self, limbs: &[usize], repr: Representation) -> Result<DevicePoly> {
        self.check_limbs(limbs)?;
        Ok(DevicePoly {
            ring: self.ring.clone(),
            buf: Arc::new(self.dev.alloc(limbs.len() * self.limb_words())?),
            limbs: limbs.to_vec(),
            repr,
        })
    }

    /// Makes `p`'s buffer its own before an in-place write (copy-on-write).
    fn make_unique(&self, p: &mut DevicePoly) -> Result<()> {
        if Arc::strong_count(&p.buf) > 1 {
            let b = self.dev.alloc(p.buf.words())?;
            self.dev.copy(&b, 0, &p.buf, 0, b.words())?;
            p.buf = Arc::new(b);
        }
        Ok(())
    }

    fn total(&self, limbs: usize) -> u64 {
        (limbs * self.ring.n()) as u64
    }

    /// Uploads a host polynomial.
    pub fn upload(&self, host: &RnsPoly) -> Result<DevicePoly> {
        if !Arc::ptr_eq(host.context(), &self.ring) {
            return Err(MathError::RingMismatch { op: "load" }.into());
        }
        Ok(DevicePoly {
            ring: self.ring.clone(),
            buf: Arc::new(self.dev.upload(&self.device_words(host.data()))?),
            limbs: host.limb_indices().to_vec(),
            repr: host.repr(),
        })
    }

    /// Uploads a host polynomial that is used many times (a key or a plaintext) once: a later
    /// load of the same data shares the device copy. A hit is exact: the candidate's data is
    /// the same buffer or compares equal word for word (a host read of the object, which a
    /// fresh selection of a key's limbs needs, since it has a new address each time). The
    /// cache holds at most half the device's memory limit, evicting the oldest entries first.
    pub fn upload_cached(&self, host: &RnsPoly) -> Result<DevicePoly> {
        use std::hash::{Hash, Hasher};
        let (data, n) = (host.data(), self.ring.n());
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for limb in data.chunks(n) {
            for k in [0, n / 3, n / 2, n - 1] {
                limb[k].hash(&mut h);
            }
        }
        let key = (host.limb_indices().to_vec(), host.repr(), h.finish());
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            let hit = c.map.get(&key).and_then(|v| {
                v.iter()
                    .find(|(hp, _)| {
                        Arc::ptr_eq(hp.context(), host.context())
                            && (std::ptr::eq(hp.data(), data) || hp.data() == data)
                    })
                    .map(|(_, d)| d.clone())
            });
            if let Some(d) = hit {
                c.hits += 1;
                return Ok(d);
            }
        }
        let d = self.upload(host)?;
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let c = &mut *guard;
        c.misses += 1;
        if !c.make_room(d.bytes(), self.cache_limit) {
            return Ok(d); // larger than the whole cache: not cached
        }
        c.bytes += d.bytes();
        c.order.push_back(crate::ring::CacheKey::Host(key.clone()));
        c.map
            .entry(key)
            .or_default()
            .push((host.clone(), d.clone()));
        Ok(d)
    }

    /// Copies a device polynomial back to the host (residues are checked below their moduli).
    pub fn download(&self, p: &DevicePoly) -> Result<RnsPoly> {
        self.check_ring(p, "store")?;
        let data = self.host_words(p.buf.download()?);
        Ok(RnsPoly::from_data(&self.ring, &p.limbs, data, p.repr)?)
    }

    /// The uniform polynomial `seed` expands to over `limbs` (evaluation form). The BLAKE3
    /// XOF and its rejection sampling run on the host ([`tessera_math::sampling`]) and the
    /// result is uploaded (not yet ported to the device), once per (seed, limbs): the
    /// expansion is a function of the seed and the moduli, so a cached copy is the same
    /// polynomial (held in the key cache, within its byte limit).
    pub fn expand_seed(&self, seed: &Seed, limbs: &[usize]) -> Result<DevicePoly> {
        self.check_limbs(limbs)?;
        let key = (seed.0, limbs.to_vec());
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(d) = c.seeds.get(&key).cloned() {
                c.hits += 1;
                return Ok(d);
            }
        }
        let moduli: Vec<u64> = limbs
            .iter()
            .map(|&i| self.ring.moduli()[i].value())
            .collect();
        let data = expand_uniform(seed, &moduli, self.ring.n());
        let d = DevicePoly {
            ring: self.ring.clone(),
            buf: Arc::new(self.dev.upload(&self.device_words(&data))?),
            limbs: limbs.to_vec(),
            repr: Representation::Evaluation,
        };
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let c = &mut *guard;
        c.misses += 1;
        if c.make_room(d.bytes(), self.cache_limit) {
            c.bytes += d.bytes();
            c.order.push_back(crate::ring::CacheKey::Seed(key.clone()));
            c.seeds.insert(key, d.clone());
        }
        Ok(d)
    }

    fn ntt_stages(&self, p: &mut DevicePoly, forward: bool) -> Result<()> {
        self.make_unique(p)?;
        self.ntt_rows(p.buf.addr(), &p.limbs, forward)
    }

    /// The forward or inverse transform, in place, of `limbs.len()` consecutive limbs at
    /// device address `addr`, limb `k` over ring modulus `limbs[k]`.
    fn ntt_rows(&self, addr: u64, limbs: &[usize], forward: bool) -> Result<()> {
        let passes = ntt_passes(self.log_n)?;
        let map = self.limb_map(limbs)?;
        let (w, ws) = if forward { &self.fwd } else { &self.inv };
        let (kernel, order): (_, Vec<_>) = if forward {
            (self.k(&k::NTT_TILE_FWD), passes.iter().collect())
        } else {
            (self.k(&k::NTT_TILE_INV), passes.iter().rev().collect())
        };
        for &&(s0, stages, log_cols) in &order {
            // One block per (limb, tile); the inverse scales by N^-1 in its last pass.
            let blocks = (limbs.len() as u64) << (self.log_n - stages - log_cols);
            let scale = u64::from(!forward && s0 == 0);
            let args = [
                addr,
                w.addr(),
                ws.addr(),
                map.addr(),
                self.mods.addr(),
                self.n_inv.0.addr(),
                self.n_inv.1.addr(),
                self.log_n,
                s0,
                stages,
                log_cols,
                scale,
            ];
            self.dev
                .launch(kernel, blocks * u64::from(k::BLOCK), &args)?;
        }
        Ok(())
    }

    /// Forward NTT of every limb (coefficient -> evaluation).
    pub fn ntt(&self, p: &mut DevicePoly) -> Result<()> {
        self.check_ring(p, "NTT")?;
        p.repr.require("NTT", Some(Representation::Coefficient))?;
        self.ntt_stages(p, true)?;
        p.repr = Representation::Evaluation;
        Ok(())
    }

    /// Inverse NTT of every limb (evaluation -> coefficient).
    pub fn intt(&self, p: &mut DevicePoly) -> Result<()> {
        self.check_ring(p, "INTT")?;
        p.repr.require("INTT", Some(Representation::Evaluation))?;
        self.ntt_stages(p, false)?;
        p.repr = Representation::Coefficient;
        Ok(())
    }

    /// A binary element-wise kernel `out = f(a, b)`.
    fn binary(
        &self,
        kernel: &'static Kernel,
        a: &DevicePoly,
        b: &DevicePoly,
        op: &'static str,
        need: Option<Representation>,
    ) -> Result<DevicePoly> {
        self.check_compatible(a, b, op, need)?;
        let out = self.alloc(&a.limbs, a.repr)?;
        self.launch_limbwise(
            kernel,
            &a.limbs,
            &[out.buf.addr(), a.buf.addr(), b.buf.addr()],
        )?;
        Ok(out)
    }

    /// `a + b`.
    pub fn add(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.binary(&k::EW_ADD, a, b, "add", None)
    }

    /// `a - b`.
    pub fn sub(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.binary(&k::EW_SUB, a, b, "sub", None)
    }

    /// Pointwise `a * b` (evaluation form).
    pub fn mul(&self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly> {
        self.binary(
            &k::EW_MUL,
            a,
            b,
            "multiply",
            Some(Representation::Evaluation),
        )
    }

    /// `-a`.
    pub fn neg(&self, a: &DevicePoly) -> Result<DevicePoly> {
        self.check_ring(a, "neg")?;
        let out = self.alloc(&a.limbs, a.repr)?;
        self.launch_limbwise(&k::EW_NEG, &a.limbs, &[out.buf.addr(), a.buf.addr()])?;
        Ok(out)
    }

    /// `acc += a * b` (evaluation form), fused in one pass.
    pub fn mul_acc(&self, acc: &mut DevicePoly, a: &DevicePoly, b: &DevicePoly) -> Result<()> {
        let op = "multiply-accumulate";
        self.check_compatible(a, b, op, Some(Representation::Evaluation))?;
        self.check_compatible(acc, a, op, Some(Representation::Evaluation))?;
        self.make_unique(acc)?;
        self.launch_limbwise(
            &k::EW_MUL_ACC,
            &a.limbs,
            &[acc.buf.addr(), a.buf.addr(), b.buf.addr()],
        )
    }

    /// `sum_i a_i * b_i` (evaluation form), one fused pass over all operands.
    pub fn dot(&self, a: &[&DevicePoly], b: &[&DevicePoly]) -> Result<DevicePoly> {
        if a.is_empty() || a.len() != b.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: a.len().max(1),
                found: b.len(),
            }
            .into());
        }
        let op = "dot product";
        for (x, y) in a.iter().zip(b) {
            self.check_compatible(x, y, op, Some(Representation::Evaluation))?;
            self.check_compatible(a[0], x, op, Some(Representation::Evaluation))?;
        }
        let out = self.alloc(&a[0].limbs, Representation::Evaluation)?;
        // Eight operand pairs per launch, as kernel arguments (unused slots repeat the first
        // pair and are not read).
        for (chunk, (ca, cb)) in a.chunks(8).zip(b.chunks(8)).enumerate() {
            let mut head = Vec::with_capacity(19);
            head.push(out.buf.addr());
            head.extend((0..8).map(|t| ca.get(t).unwrap_or(&ca[0]).buf.addr()));
            head.extend((0..8).map(|t| cb.get(t).unwrap_or(&cb[0]).buf.addr()));
            head.extend([ca.len() as u64, u64::from(chunk > 0)]);
            self.launch_limbwise(&k::EW_DOT8, &a[0].limbs, &head)?;
        }
        Ok(out)
    }

    /// One constant per limb, reduced by its modulus.
    fn limb_constants(&self, a: &DevicePoly, c: &[u64]) -> Result<Vec<u64>> {
        if c.len() != a.limbs.len() {
            return Err(MathError::LengthMismatch {
                what: "per-limb constants",
                expected: a.limbs.len(),
                found: c.len(),
            }
            .into());
        }
        Ok(a.limbs
            .iter()
            .zip(c)
            .map(|(&i, &x)| self.ring.moduli()[i].reduce(x))
            .collect())
    }

    /// `a + c_k` on every word of limb `k` (evaluation form).
    pub fn add_scalar(&self, a: &DevicePoly, c: &[u64]) -> Result<DevicePoly> {
        self.check_ring(a, "add scalar")?;
        a.repr
            .require("add scalar", Some(Representation::Evaluation))?;
        let c = self.constants(&self.limb_constants(a, c)?)?;
        let out = self.alloc(&a.limbs, a.repr)?;
        self.launch_limbwise(
            &k::EW_ADD_CONST,
            &a.limbs,
            &[out.buf.addr(), a.buf.addr(), c.addr()],
        )?;
        Ok(out)
    }

    /// The per-limb constants of a scalar product on the device: `c_k` reduced by limb `k`'s
    /// modulus, and their Shoup quotients for the word size.
    fn scalar_operands(&self, a: &DevicePoly, c: &[u64]) -> Result<(Arc<Buffer>, Arc<Buffer>)> {
        let cr = self.limb_constants(a, c)?;
        let shoup: Vec<u64> = a
            .limbs
            .iter()
            .zip(&cr)
            .map(|(&i, &x)| shoup_for(&self.ring.moduli()[i], x, self.w32))
            .collect();
        Ok((self.constants(&cr)?, self.constants(&shoup)?))
    }

    /// `a * c_k` on limb `k` (any representation).
    pub fn mul_scalar(&self, a: &DevicePoly, c: &[u64]) -> Result<DevicePoly> {
        self.check_ring(a, "multiply scalar")?;
        let (c, cs) = self.scalar_operands(a, c)?;
        let out = self.alloc(&a.limbs, a.repr)?;
        self.launch_limbwise(
            &k::EW_MUL_CONST,
            &a.limbs,
            &[out.buf.addr(), a.buf.addr(), c.addr(), cs.addr()],
        )?;
        Ok(out)
    }

    /// `(a - b) * c_k` on limb `k` in one pass (ModDown's and rescaling's last step): the
    /// same words as [`DeviceRing::sub`] then [`DeviceRing::mul_scalar`], without the
    /// difference's polynomial.
    pub fn sub_mul_scalar(&self, a: &DevicePoly, b: &DevicePoly, c: &[u64]) -> Result<DevicePoly> {
        self.check_compatible(a, b, "sub", None)?;
        let (c, cs) = self.scalar_operands(a, c)?;
        let out = self.alloc(&a.limbs, a.repr)?;
        self.launch_limbwise(
            &k::EW_SUB_MUL_CONST,
            &a.limbs,
            &[
                out.buf.addr(),
                a.buf.addr(),
                b.buf.addr(),
                c.addr(),
                cs.addr(),
            ],
        )?;
        Ok(out)
    }

    /// `a += b` in place (`a`'s buffer, copied first if shared): [`DeviceRing::add`] without a
    /// new polynomial.
    pub fn add_assign(&self, a: &mut DevicePoly, b: &DevicePoly) -> Result<()> {
        self.check_compatible(a, b, "add", None)?;
        self.make_unique(a)?;
        self.launch_limbwise(
            &k::EW_ADD,
            &a.limbs,
            &[a.buf.addr(), a.buf.addr(), b.buf.addr()],
        )
    }

    /// `(sum_i u_i * b_i, sum_i u_i * a_i)` (evaluation form): key switching's two inner
    /// products with one key, each `u_i` read once for both (four digits per launch). The
    /// same words as two [`DeviceRing::dot`]s.
    pub fn dot_pair(
        &self,
        u: &[&DevicePoly],
        b: &[&DevicePoly],
        a: &[&DevicePoly],
    ) -> Result<(DevicePoly, DevicePoly)> {
        if u.is_empty() || u.len() != b.len() || u.len() != a.len() {
            return Err(MathError::LengthMismatch {
                what: "dot product operands",
                expected: u.len().max(1),
                found: if u.len() != b.len() { b.len() } else { a.len() },
            }
            .into());
        }
        let op = "dot product";
        for ((x, y), z) in u.iter().zip(b).zip(a) {
            self.check_compatible(x, y, op, Some(Representation::Evaluation))?;
            self.check_compatible(x, z, op, Some(Representation::Evaluation))?;
            self.check_compatible(u[0], x, op, Some(Representation::Evaluation))?;
        }
        let out0 = self.alloc(&u[0].limbs, Representation::Evaluation)?;
        let out1 = self.alloc(&u[0].limbs, Representation::Evaluation)?;
        // Four digits per launch, as kernel arguments (unused slots repeat the first digit
        // and are not read).
        for (chunk, ((cu, cb), ca)) in u.chunks(4).zip(b.chunks(4)).zip(a.chunks(4)).enumerate() {
            let mut head = Vec::with_capacity(16);
            head.extend([out0.buf.addr(), out1.buf.addr()]);
            for part in [cu, cb, ca] {
                head.extend((0..4).map(|t| part.get(t).unwrap_or(&part[0]).buf.addr()));
            }
            head.extend([cu.len() as u64, u64::from(chunk > 0)]);
            self.launch_limbwise(&k::EW_DOT_PAIR4, &u[0].limbs, &head)?;
        }
        Ok((out0, out1))
    }

    /// `X -> X^g` in the current representation.
    pub fn automorphism(&self, a: &DevicePoly, g: u64) -> Result<DevicePoly> {
        self.check_ring(a, "automorphism")?;
        let n = self.ring.n();
        let out = self.alloc(&a.limbs, a.repr)?;
        let total = self.total(a.limbs.len());
        match a.repr {
            Representation::Evaluation => {
                let perm = {
                    let mut perms = self.perms.lock().unwrap_or_else(|e| e.into_inner());
                    match perms.get(&g) {
                        Some(p) => p.clone(),
                        None => {
                            let p: Vec<u64> = automorphism_permutation(g, n)?
                                .into_iter()
                                .map(u64::from)
                                .collect();
                            let b = Arc::new(self.dev.upload(&p)?);
                            perms.insert(g, b.clone());
                            b
                        }
                    }
                };
                let args = [out.buf.addr(), a.buf.addr(), perm.addr(), self.log_n, total];
                self.dev.launch(self.k(&k::AUTO_EVAL), total, &args)?;
            }
            Representation::Coefficient => {
                galois_check(g, n)?;
                let head = [out.buf.addr(), a.buf.addr(), g];
                self.launch_limbwise(&k::AUTO_COEFF, &a.limbs, &head)?;
            }
        }
        Ok(out)
    }

    /// The BConv constants for `from -> to` (cached): computed from the moduli exactly as
    /// `BaseConverter` defines them.
    fn conv_tables(&self, from: &[usize], to: &[usize]) -> Result<Arc<ConvTables>> {
        // The CPU's checks (limb indices, distinct primes) and error messages.
        self.ring.converter(from, to)?;
        let key = (from.to_vec(), to.to_vec());
        let mut convs = self.convs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = convs.get(&key) {
            return Ok(t.clone());
        }
        let m = self.ring.moduli();
        let qs: Vec<u64> = from.iter().map(|&i| m[i].value()).collect();
        // prod_{k != skip} q_k mod p
        let prod_mod = |p: &tessera_math::Modulus, skip: Option<usize>| {
            qs.iter()
                .enumerate()
                .filter(|(k, _)| Some(*k) != skip)
                .fold(1u64, |acc, (_, &q)| p.mul(acc, p.reduce(q)))
        };
        let (mut inv, mut inv_s) = (vec![], vec![]);
        for (k, &i) in from.iter().enumerate() {
            let x = m[i]
                .inv(prod_mod(&m[i], Some(k)))
                .expect("distinct primes are coprime");
            inv.push(x);
            inv_s.push(shoup_for(&m[i], x, self.w32));
        }
        let (mut qhat, mut qhat_s, mut vq) = (vec![], vec![], vec![]);
        for &j in to {
            let p = &m[j];
            let row: Vec<u64> = (0..from.len()).map(|k| prod_mod(p, Some(k))).collect();
            qhat_s.extend(row.iter().map(|&c| shoup_for(p, c, self.w32)));
            qhat.extend(row);
            let q_mod_p = prod_mod(p, None);
            vq.extend((0..=from.len() as u64).map(|v| p.mul(p.reduce(v), q_mod_p)));
        }
        let qinv: Vec<u64> = qs.iter().map(|&q| (1.0 / q as f64).to_bits()).collect();
        let t = Arc::new(ConvTables {
            inv: self.dev.upload(&inv)?,
            inv_shoup: self.dev.upload(&inv_s)?,
            qhat: self.dev.upload(&qhat)?,
            qhat_shoup: self.dev.upload(&qhat_s)?,
            qinv: self.dev.upload(&qinv)?,
            vq: self.dev.upload(&vq)?,
        });
        convs.insert(key, t.clone());
        Ok(t)
    }

    /// BConv's first step for `a`'s limbs: `y_i = [x_i * qhat_i^-1]_(q_i)`, in a buffer of
    /// `a`'s shape.
    fn bconv_scale(&self, a: &DevicePoly, t: &ConvTables) -> Result<Buffer> {
        let y = self.dev.alloc(a.limbs.len() * self.limb_words())?;
        let head = [y.addr(), a.buf.addr(), t.inv.addr(), t.inv_shoup.addr()];
        self.launch_limbwise(&k::BCONV_SCALE, &a.limbs, &head)?;
        Ok(y)
    }

    /// BConv's second step: the limbs `to`, from `y` over `l_in` limbs, written as
    /// consecutive limbs at device address `out` (a polynomial's buffer, or rows of one).
    fn bconv_mac_into(
        &self,
        out: u64,
        y: &Buffer,
        l_in: usize,
        to: &[usize],
        t: &ConvTables,
        mode: ConversionMode,
    ) -> Result<()> {
        let out_map = self.limb_map(to)?;
        let total = self.total(to.len());
        let args = [
            out,
            y.addr(),
            l_in as u64,
            t.qhat.addr(),
            t.qhat_shoup.addr(),
            t.qinv.addr(),
            t.vq.addr(),
            (mode == ConversionMode::ExactCentered) as u64,
            out_map.addr(),
            self.mods.addr(),
            self.log_n,
            total,
        ];
        let threads = self.total(to.len().div_ceil(self.dev.bconv_outputs_per_thread()));
        self.dev.launch(self.k(&k::BCONV_MAC), threads, &args)
    }

    /// Fast base conversion of `a` (coefficient form) to the limbs `to`.
    pub fn bconv(&self, a: &DevicePoly, to: &[usize], mode: ConversionMode) -> Result<DevicePoly> {
        self.check_ring(a, "BConv")?;
        a.repr.require("BConv", Some(Representation::Coefficient))?;
        let t = self.conv_tables(&a.limbs, to)?;
        let y = self.bconv_scale(a, &t)?;
        let out = self.alloc(to, Representation::Coefficient)?;
        self.bconv_mac_into(out.buf.addr(), &y, a.limbs.len(), to, &t, mode)?;
        Ok(out)
    }

    /// ModUp's extended digit assembled in place (`Backend::extend_digit`): over `to`, the
    /// digit's own limbs copied from `own` (evaluation form) and the others converted from
    /// `digit` (coefficient form) by fast BConv straight into their rows, then transformed
    /// there, so no separate converted polynomial is concatenated (one pass over the other
    /// limbs fewer). The same words as `bconv`, `ntt`, `select_limbs` and `concat`.
    ///
    /// `Ok(None)` when the operands are not those of a ModUp (a representation, a digit limb
    /// missing from `own` or `to`, no other limb, a repeated limb): the caller then runs the
    /// composition, which reports the error exactly as the primaries do.
    pub fn extend_digit(
        &self,
        digit: &DevicePoly,
        own: &DevicePoly,
        to: &[usize],
    ) -> Result<Option<DevicePoly>> {
        self.check_ring(digit, "BConv")?;
        self.check_ring(own, "select limbs")?;
        let pos = |set: &[usize], i: usize| set.iter().position(|&x| x == i);
        let lacks = |i: &usize| !digit.limbs.contains(i);
        if digit.repr != Representation::Coefficient
            || own.repr != Representation::Evaluation
            || self.check_limbs(to).is_err()
            || digit
                .limbs
                .iter()
                .any(|&i| pos(&own.limbs, i).is_none() || pos(to, i).is_none())
            || !to.iter().any(lacks)
        {
            return Ok(None);
        }
        let others: Vec<usize> = to.iter().copied().filter(lacks).collect();
        // The checks and errors of the composition's single conversion.
        self.ring.converter(&digit.limbs, &others)?;
        let out = self.alloc(to, Representation::Evaluation)?;
        let lw = self.limb_words();
        let row = |k: usize| out.buf.addr() + (k * lw * 8) as u64;
        // The digit's limbs from `own`, one copy per run consecutive in both.
        let mut run: Option<(usize, usize, usize)> = None; // (from, to, limbs)
        for (k, &i) in to.iter().enumerate() {
            let Some(from) = (!lacks(&i)).then(|| pos(&own.limbs, i)).flatten() else {
                continue;
            };
            run = match run {
                Some((f, t, len)) if f + len == from && t + len == k => Some((f, t, len + 1)),
                Some((f, t, len)) => {
                    self.dev
                        .copy(&out.buf, t * lw, &own.buf, f * lw, len * lw)?;
                    Some((from, k, 1))
                }
                None => Some((from, k, 1)),
            };
        }
        if let Some((f, t, len)) = run {
            self.dev
                .copy(&out.buf, t * lw, &own.buf, f * lw, len * lw)?;
        }
        // The other limbs, per run of consecutive rows: converted into place, transformed.
        let mut y: Option<Buffer> = None;
        let mut k = 0;
        while k < to.len() {
            if !lacks(&to[k]) {
                k += 1;
                continue;
            }
            let end = (k..to.len()).find(|&e| !lacks(&to[e])).unwrap_or(to.len());
            let limbs = &to[k..end];
            let t = self.conv_tables(&digit.limbs, limbs)?;
            if y.is_none() {
                y = Some(self.bconv_scale(digit, &t)?);
            }
            let y = y.as_ref().expect("set above");
            self.bconv_mac_into(
                row(k),
                y,
                digit.limbs.len(),
                limbs,
                &t,
                ConversionMode::Approximate,
            )?;
            self.ntt_rows(row(k), limbs, true)?;
            k = end;
        }
        Ok(Some(out))
    }

    /// Position of ring limb `i` in `p`, or the CPU's limb-mismatch error.
    fn position(&self, p: &[&DevicePoly], i: usize, op: &'static str) -> Result<(usize, usize)> {
        p.iter()
            .enumerate()
            .find_map(|(pi, q)| q.limbs.iter().position(|&x| x == i).map(|pos| (pi, pos)))
            .ok_or_else(|| {
                MathError::LimbMismatch {
                    op,
                    left: p.iter().flat_map(|q| q.moduli()).collect(),
                    right: vec![self.ring.moduli().get(i).map(|m| m.value()).unwrap_or(0)],
                }
                .into()
            })
    }

    /// The limbs `keep` of `a` (device-to-device copies).
    pub fn select_limbs(&self, a: &DevicePoly, keep: &[usize]) -> Result<DevicePoly> {
        self.check_ring(a, "select limbs")?;
        if keep == a.limbs.as_slice() {
            return Ok(a.clone());
        }
        self.concat(&[a], keep).map_err(|e| match e {
            crate::CudaError::Math(MathError::LimbMismatch { left, right, .. }) => {
                MathError::LimbMismatch {
                    op: "select limbs",
                    left,
                    right,
                }
                .into()
            }
            other => other,
        })
    }

    /// A polynomial over `limbs` assembled from the parts that hold them.
    pub fn concat(&self, parts: &[&DevicePoly], limbs: &[usize]) -> Result<DevicePoly> {
        let first = parts.first().ok_or(MathError::OutOfRange {
            name: "parts",
            value: "0".into(),
            allowed: "at least one polynomial".into(),
        })?;
        for p in parts {
            self.check_ring(p, "concat")?;
            p.repr.require("concat", Some(first.repr))?;
        }
        let out = self.alloc(limbs, first.repr)?;
        // Device words per limb (copies move whole limbs).
        let n = self.limb_words();
        // One copy per run of limbs that are consecutive in both the output and one part.
        let mut run: Option<(usize, usize, usize, usize)> = None; // (part, from, to, limbs)
        for (k, &i) in limbs.iter().enumerate() {
            let (pi, pos) = self.position(parts, i, "concat")?;
            run = match run {
                Some((p, from, to, len)) if p == pi && from + len == pos && to + len == k => {
                    Some((p, from, to, len + 1))
                }
                Some((p, from, to, len)) => {
                    self.dev
                        .copy(&out.buf, to * n, &parts[p].buf, from * n, len * n)?;
                    Some((pi, pos, k, 1))
                }
                None => Some((pi, pos, k, 1)),
            };
        }
        if let Some((p, from, to, len)) = run {
            self.dev
                .copy(&out.buf, to * n, &parts[p].buf, from * n, len * n)?;
        }
        Ok(out)
    }

    /// The single limb of `a` (coefficient form, centered lift) reduced into each of `to`.
    pub fn extend_limb(&self, a: &DevicePoly, to: &[usize]) -> Result<DevicePoly> {
        self.check_ring(a, "extend limb")?;
        a.repr
            .require("extend limb", Some(Representation::Coefficient))?;
        if a.limbs.len() != 1 {
            return Err(MathError::OutOfRange {
                name: "limbs",
                value: a.limbs.len().to_string(),
                allowed: "exactly one limb to extend".into(),
            }
            .into());
        }
        let out = self.alloc(to, Representation::Coefficient)?;
        let src = self.ring.moduli()[a.limbs[0]].value();
        let head = [out.buf.addr(), a.buf.addr(), src];
        self.launch_limbwise(&k::EW_LIFT_CENTERED, to, &head)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{ntt_passes, NTT_TILE_BITS};

    /// The passes cover every stage once, in order; every tile (2^(stages + columns) words)
    /// fits `NTT_TILE_MAX`, its columns fit the index bits below its stages, and degrees
    /// past two tiles are refused.
    #[test]
    fn ntt_passes_cover_the_stages() {
        assert_eq!(ntt_passes(16).unwrap(), vec![(0, 5, 6), (5, 11, 0)]);
        assert_eq!(ntt_passes(10).unwrap(), vec![(0, 10, 0)]);
        for log_n in 1..=2 * NTT_TILE_BITS {
            let mut next = 0;
            for (s0, stages, cols) in ntt_passes(log_n).unwrap() {
                assert_eq!(s0, next);
                assert!(stages >= 1 && stages + cols <= NTT_TILE_BITS);
                assert!(cols <= log_n - s0 - stages);
                next += stages;
            }
            assert_eq!(next, log_n);
        }
        assert!(ntt_passes(2 * NTT_TILE_BITS + 1).is_err());
    }
}
