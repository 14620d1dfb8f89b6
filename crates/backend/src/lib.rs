//! # tessera-backend
//!
//! The primary functions every HE operation lowers to (design.md sections 1 and 4): NTT, INTT,
//! BConv, automorphism, element-wise multiply / add / subtract / multiply-accumulate, PRNG
//! expansion, and the movement of keys, plaintexts and ciphertexts between the host (off-chip)
//! and the backend. The CKKS evaluator is written once against [`Backend`]; the CPU backend
//! computes, and the trace backend records the same calls as an instruction stream
//! ([`trace`] documents the format).

mod compute;
pub mod conformance;
mod cpu;
mod cpu32;
#[cfg(feature = "cuda")]
mod cuda;
mod profile;
mod reference;
pub mod trace;

pub use compute::{BackendChoice, Compute, ComputePoly};
// `DeviceReport` is defined below, next to the trait method that returns it.
pub use cpu::CpuBackend;
pub use cpu32::{Cpu32Backend, Poly32, Word};
#[cfg(feature = "cuda")]
pub use cuda::CudaBackend;
pub use profile::{OpTime, Profiled};
pub use reference::{RefPoly, ReferenceBackend};
use std::sync::Arc;
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};
pub use trace::{Instr, MetaBackend, Op, Recording, TraceBackend};

/// A host object known by its shape and identity only, without data: how a key half or a
/// plaintext exists when a program is recorded for the simulator (a recording names each
/// object it loads and reads its limb set; it never reads the values). Making the data
/// (key generation's NTTs and sampling, encoding's FFT and NTTs) is what recording cost
/// before (issue 25 acceptance 1); a shape costs nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostShape {
    /// Limb set (ring indices) of the object as it is loaded.
    pub limbs: Vec<usize>,
    /// Representation it is stored in.
    pub repr: Representation,
    /// Identity: equal for the same object (at any level), distinct for different objects,
    /// as a fingerprint of the data would be (see `trace::Recorder::shape_id`).
    pub id: u64,
}

/// What [`Backend::load_host`] loads: a polynomial with its data, some limbs of one, or a
/// [`HostShape`]. Only a recording backend can load a shape; a computing backend refuses it
/// with a typed error.
#[derive(Clone, Debug)]
pub enum HostPoly {
    /// The object's data.
    Data(RnsPoly),
    /// The limbs `limbs` of the host object `whole`, not yet copied out: a key switch at a
    /// level below the top loads the key's leading and special limbs. A backend that keeps
    /// the whole object resident (a GPU's key cache) selects them where the object lives,
    /// without a host copy per load; the others select on the host ([`HostPoly::data`]).
    Limbs {
        /// The whole object (its buffer is shared, not copied).
        whole: RnsPoly,
        /// The ring limb indices to load, each a limb of `whole`.
        limbs: Vec<usize>,
    },
    /// The object's shape and identity (no data).
    Shape(HostShape),
}

impl HostPoly {
    /// The data this object loads (selecting the limbs of [`HostPoly::Limbs`] on the host),
    /// or the typed refusal of a shape.
    pub fn data(&self) -> Result<std::borrow::Cow<'_, RnsPoly>, MathError> {
        use std::borrow::Cow;
        match self {
            HostPoly::Data(p) => Ok(Cow::Borrowed(p)),
            HostPoly::Limbs { whole, limbs } => Ok(Cow::Owned(whole.select_limbs(limbs)?)),
            HostPoly::Shape(_) => Err(shape_unsupported("load")),
        }
    }
}

/// The error a backend that computes gives for a [`HostShape`].
pub fn shape_unsupported(op: &str) -> MathError {
    MathError::Unsupported(format!(
        "{op}: a shape-only object (made by a shape-only CKKS context, for recording) has no data; \
         make keys and plaintexts with a computing context (CkksContext::new) to compute"
    ))
}

/// What a buffer holds: lets a simulator decide what stays on chip and what streams in.
/// A trace names it in lower case (`ciphertext`, `evalkey`, `plaintext`, `constant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A ciphertext or a temporary of an HE operation.
    Ciphertext,
    /// A key-switching (evaluation) key.
    EvalKey,
    /// An encoded plaintext.
    Plaintext,
    /// A constant (e.g. a scalar broadcast or a precomputed table).
    Constant,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 4] = [
        Kind::Ciphertext,
        Kind::EvalKey,
        Kind::Plaintext,
        Kind::Constant,
    ];

    /// The name a trace gives it.
    ///
    /// ```
    /// assert_eq!(tessera_backend::Kind::EvalKey.name(), "evalkey");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ciphertext => "ciphertext",
            Kind::EvalKey => "evalkey",
            Kind::Plaintext => "plaintext",
            Kind::Constant => "constant",
        }
    }
}

/// The primary functions. Every method checks its operands (ring, limb set, representation)
/// and returns a typed error on mismatch.
pub trait Backend {
    /// A polynomial living in the backend.
    type Poly: Clone + std::fmt::Debug;

    /// The ring every polynomial of this backend lives in.
    fn ring(&self) -> &Arc<RingContext>;
    /// The limb set (ring indices) of `p`.
    fn limbs(&self, p: &Self::Poly) -> Vec<usize>;
    /// The representation of `p`.
    fn repr(&self, p: &Self::Poly) -> Representation;

    /// Off-chip load of host data.
    fn load(&mut self, host: &RnsPoly, kind: Kind) -> Result<Self::Poly, MathError>;
    /// Off-chip load of a host object given by its data or, on a recording backend, by its
    /// shape only ([`HostPoly`]). The default loads data with [`Backend::load`] and refuses a
    /// shape.
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> Result<Self::Poly, MathError> {
        self.load(&*host.data()?, kind)
    }
    /// Off-chip store back to the host.
    fn store(&mut self, p: &Self::Poly) -> Result<RnsPoly, MathError>;
    /// PRNG expansion of a 32-byte seed into a uniform polynomial over `limbs`, read as
    /// evaluation representation (the `a` half of a seeded evaluation key).
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        kind: Kind,
    ) -> Result<Self::Poly, MathError>;

    /// The inner product of extended digits `ups` with a seeded evaluation key: returns
    /// `(sum_i ups_i * b_i, sum_i ups_i * a_i)`, where `b_i` is `key_b[i]` loaded off-chip and
    /// `a_i` is the PRNG expansion of `seeds[i]` over `limbs`.
    ///
    /// The primaries are exactly those of the default body, in its order (`load_host` and
    /// `expand_seed` per digit, then two `dot`s), and a tracing backend records them as such.
    /// A computing backend may fuse them into one pass over memory (the CPU backend does) but
    /// must return the same values.
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(Self::Poly, Self::Poly), MathError> {
        let mut bs = Vec::with_capacity(key_b.len());
        let mut us = Vec::with_capacity(seeds.len());
        for (b, seed) in key_b.iter().zip(seeds) {
            bs.push(self.load_host(b, Kind::EvalKey)?);
            us.push(self.expand_seed(seed, limbs, Kind::EvalKey)?);
        }
        let u0 = self.dot(ups, &bs.iter().collect::<Vec<_>>())?;
        let u1 = self.dot(ups, &us.iter().collect::<Vec<_>>())?;
        Ok((u0, u1))
    }

    /// A hoisted rotation's inner product: [`Backend::automorphism`] `g` of each of `ups`
    /// (extended digits in evaluation form), then [`Backend::dot_pair_seeded_key`] of the
    /// rotated digits with `key_b` and `seeds` over `limbs`.
    ///
    /// The primaries are exactly those of the default body, in its order, and a tracing
    /// backend records them as such. A computing backend may interleave them (the CPU backend
    /// permutes each digit's limb and multiplies it into both sums while it is in cache, so
    /// the rotated digits are never whole in memory) but must return the same values.
    fn automorphism_dot_pair_seeded_key(
        &mut self,
        ups: &[&Self::Poly],
        g: u64,
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(Self::Poly, Self::Poly), MathError> {
        let rotated = ups
            .iter()
            .map(|u| self.automorphism(u, g))
            .collect::<Result<Vec<_>, _>>()?;
        self.dot_pair_seeded_key(&rotated.iter().collect::<Vec<_>>(), key_b, seeds, limbs)
    }

    /// Forward NTT of every limb.
    fn ntt(&mut self, p: &mut Self::Poly) -> Result<(), MathError>;
    /// Inverse NTT of every limb.
    fn intt(&mut self, p: &mut Self::Poly) -> Result<(), MathError>;
    /// `a + b`.
    fn add(&mut self, a: &Self::Poly, b: &Self::Poly) -> Result<Self::Poly, MathError>;
    /// `a += b`: [`Backend::add`] into a polynomial the caller owns and no longer needs as it
    /// was (key switching's `c0 + u0`). A backend that writes in place saves the fresh
    /// result's memory traffic (on the CPU, 24 limbs at N = 2^16: about 0.6 against 1.0 ms);
    /// the default is `add`, so a trace records the same primary either way.
    fn add_assign(&mut self, a: &mut Self::Poly, b: &Self::Poly) -> Result<(), MathError> {
        *a = self.add(a, b)?;
        Ok(())
    }
    /// `a - b`.
    fn sub(&mut self, a: &Self::Poly, b: &Self::Poly) -> Result<Self::Poly, MathError>;
    /// `-a`.
    fn neg(&mut self, a: &Self::Poly) -> Result<Self::Poly, MathError>;
    /// Pointwise `a * b` (evaluation representation).
    fn mul(&mut self, a: &Self::Poly, b: &Self::Poly) -> Result<Self::Poly, MathError>;
    /// `acc += a * b` (evaluation representation).
    fn mul_acc(
        &mut self,
        acc: &mut Self::Poly,
        a: &Self::Poly,
        b: &Self::Poly,
    ) -> Result<(), MathError>;
    /// `a + c_k` on every coefficient of limb `k` (a constant added in evaluation form).
    fn add_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> Result<Self::Poly, MathError>;
    /// `sum_i a_i * b_i` (evaluation representation), reduced once per coefficient.
    fn dot(&mut self, a: &[&Self::Poly], b: &[&Self::Poly]) -> Result<Self::Poly, MathError>;
    /// `a * c_k` with one constant per limb.
    fn mul_scalar(&mut self, a: &Self::Poly, c: &[u64]) -> Result<Self::Poly, MathError>;
    /// `(a - b) * c_k` with one constant per limb (ModDown's and rescaling's last step).
    ///
    /// The primaries are exactly those of the default body (`sub`, then `mul_scalar`), and a
    /// tracing backend records them as such. A computing backend may fuse them into one pass
    /// over memory (the CPU backend does) but must return the same values.
    fn sub_mul_scalar(
        &mut self,
        a: &Self::Poly,
        b: &Self::Poly,
        c: &[u64],
    ) -> Result<Self::Poly, MathError> {
        let d = self.sub(a, b)?;
        self.mul_scalar(&d, c)
    }
    /// `X -> X^g`.
    fn automorphism(&mut self, a: &Self::Poly, g: u64) -> Result<Self::Poly, MathError>;
    /// Base conversion of `a` (coefficient representation) to the limb set `to`.
    fn bconv(
        &mut self,
        a: &Self::Poly,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<Self::Poly, MathError>;
    /// The limbs `keep` of `a` (data movement only).
    fn select_limbs(&mut self, a: &Self::Poly, keep: &[usize]) -> Result<Self::Poly, MathError>;
    /// A polynomial over `limbs` assembled from the parts that hold them (data movement only).
    fn concat(&mut self, parts: &[&Self::Poly], limbs: &[usize]) -> Result<Self::Poly, MathError>;
    /// One extended digit of ModUp, over `to` in evaluation form: `digit` (coefficient form,
    /// the digit's limbs) converted by fast BConv to the limbs of `to` it lacks and
    /// transformed by the forward NTT, joined with `own`'s limbs of the digit (evaluation
    /// form).
    ///
    /// The primaries are exactly those of the default body, in its order (`bconv`, `ntt`,
    /// `select_limbs`, `concat`), and a tracing backend records them as such. A computing
    /// backend may assemble the result in place instead of concatenating (the CPU backend
    /// does) but must return the same values.
    fn extend_digit(
        &mut self,
        digit: &Self::Poly,
        own: &Self::Poly,
        to: &[usize],
    ) -> Result<Self::Poly, MathError> {
        compose_extend_digit(self, digit, own, to)
    }
    /// Every extended digit of ModUp: for each of `digits` (limb sets), its limbs selected
    /// from `coeff` (the input in coefficient form) and extended with
    /// [`Backend::extend_digit`] against `own` (the input in evaluation form).
    ///
    /// The primaries are exactly those of the default body, in its order (per digit
    /// `select_limbs`, then `extend_digit`'s), and a tracing backend records them as such. A
    /// computing backend may reorder the work across digits (the CPU backend runs each prime's
    /// NTTs one after another, so its tables are read from cache) but must return the same
    /// values.
    fn mod_up_digits(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
    ) -> Result<Vec<Self::Poly>, MathError> {
        let mut ups = Vec::with_capacity(digits.len());
        for digit in digits {
            let sub = self.select_limbs(coeff, digit)?;
            ups.push(self.extend_digit(&sub, own, to)?);
        }
        Ok(ups)
    }
    /// ModUp followed by the seeded inner product: [`Backend::mod_up_digits`] of `coeff`
    /// and `own` over `to`, then [`Backend::dot_pair_seeded_key`] of the extended digits with
    /// `key_b` and `seeds` over `to`. Returns `(sum_i up_i * b_i, sum_i up_i * a_i)`.
    ///
    /// The primaries are exactly those of the default body, in its order, and a tracing
    /// backend records them as such. A computing backend may interleave them (the CPU
    /// backend transforms each prime's converted limbs and multiplies them into both sums
    /// while they are in cache, so the extended digits are never whole in memory) but must
    /// return the same values.
    fn mod_up_dot_pair_seeded_key(
        &mut self,
        coeff: &Self::Poly,
        own: &Self::Poly,
        digits: &[Vec<usize>],
        to: &[usize],
        key_b: &[HostPoly],
        seeds: &[Seed],
    ) -> Result<(Self::Poly, Self::Poly), MathError> {
        let ups = self.mod_up_digits(coeff, own, digits, to)?;
        self.dot_pair_seeded_key(&ups.iter().collect::<Vec<_>>(), key_b, seeds, to)
    }
    /// A one-limb polynomial (coefficient representation) reduced into the moduli `to`.
    fn extend_limb(&mut self, a: &Self::Poly, to: &[usize]) -> Result<Self::Poly, MathError>;

    /// Marks the start of an HE operation (for timelines); `level` is its input level.
    fn begin_op(&mut self, name: &'static str, level: usize);
    /// Marks the end of the innermost HE operation.
    fn end_op(&mut self);

    /// Waits until every primary issued so far has finished. A GPU backend's launches,
    /// copies and frees are asynchronous, so code that reads a clock (benchmarks, profiles)
    /// calls this before it does; on the CPU backends every call has already finished.
    fn synchronize(&mut self) -> Result<(), MathError> {
        Ok(())
    }

    /// The accelerator this backend computes on and its memory, for reports (`None`: the
    /// host's memory, which the process's peak RSS already reports).
    fn device_report(&self) -> Option<DeviceReport> {
        None
    }
}

/// [`Backend::extend_digit`]'s composition (`bconv`, `ntt`, `select_limbs`, `concat`): the
/// trait's default, and what a backend that assembles the digit in place runs for operands its
/// fused path does not take, so that errors come from the same primaries.
pub fn compose_extend_digit<B: Backend + ?Sized>(
    b: &mut B,
    digit: &B::Poly,
    own: &B::Poly,
    to: &[usize],
) -> Result<B::Poly, MathError> {
    let limbs = b.limbs(digit);
    let others: Vec<usize> = to.iter().copied().filter(|j| !limbs.contains(j)).collect();
    let mut ext = b.bconv(digit, &others, ConversionMode::Approximate)?;
    b.ntt(&mut ext)?;
    let mine = b.select_limbs(own, &limbs)?;
    b.concat(&[&mine, &ext], to)
}

/// An accelerator's identity and this process's use of its memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceReport {
    /// The device's name (e.g. `NVIDIA H100 80GB HBM3 (CUDA device 0)`).
    pub name: String,
    /// Device memory in bytes.
    pub capacity_bytes: u64,
    /// Bytes this process holds now (buffers, cached keys and plaintexts).
    pub bytes_in_use: u64,
    /// The most bytes held at once since the device was opened.
    pub peak_bytes: u64,
}
