//! The one place that chooses the compute backend: [`BackendChoice`] (what the user asked for:
//! `--backend`, `TESSERA_BACKEND`, Python's `Context(backend=...)`) and [`Compute`], the
//! backend every computing site builds (`Compute::from_default(ring)`), which dispatches each
//! primary to the backend chosen.
//!
//! Why an enum and not a trait object: [`Backend`] has an associated polynomial type, and an
//! enum keeps every call statically dispatched (one `match` per primary, next to operations of
//! microseconds to milliseconds). Adding a backend is a variant of each enum, one arm of the
//! `delegate!` macro (shared by every primary), one [`BackendChoice`] variant, and passing
//! [`crate::conformance`].
//!
//! ```
//! use tessera_backend::{Backend, BackendChoice, Compute, Kind};
//! use tessera_math::primes::generate_ntt_primes;
//! use tessera_math::{Representation, RingContext, RnsPoly};
//!
//! let ring = RingContext::new(16, &generate_ntt_primes(30, 16, 2, &[]).unwrap()).unwrap();
//! let choice: BackendChoice = "cpu".parse().unwrap();
//! let mut b = Compute::new(ring.clone(), choice).unwrap();
//! let host = RnsPoly::from_signed(&ring, &[0, 1], &[1; 16]).unwrap();
//! let mut p = b.load(&host, Kind::Ciphertext).unwrap();
//! b.ntt(&mut p).unwrap();
//! assert_eq!(b.repr(&p), Representation::Evaluation);
//! b.intt(&mut p).unwrap();
//! assert_eq!(b.store(&p).unwrap(), host);
//! // Unknown names list the allowed values.
//! let e = "gpu".parse::<BackendChoice>().unwrap_err().to_string();
//! assert!(e.contains("cpu") && e.contains("cuda"), "{e}");
//! ```

use crate::{Backend, Cpu32Backend, CpuBackend, HostPoly, Kind, Poly32, Word};
use std::sync::{Arc, RwLock};
use tessera_math::primes::generate_ntt_primes;
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// The environment variable that chooses the backend of a process (`cpu` or `cuda`).
pub const BACKEND_ENV: &str = "TESSERA_BACKEND";

/// Which compute backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackendChoice {
    /// This machine's CPU: [`Cpu32Backend`] (32-bit words) when every prime of the ring is below
    /// 2^30 and 32-bit words measure faster on the kernel in force, else [`CpuBackend`]
    /// (64-bit words); `TESSERA_WORD=32|64` overrides ([`Word::choose`], in [`Compute::new`]).
    #[default]
    Cpu,
    /// An NVIDIA GPU through CUDA (cargo feature `cuda` of tessera-backend).
    Cuda,
}

/// The process-wide choice set by a front end (`tessera --backend`), ahead of the environment.
static PROCESS_CHOICE: RwLock<Option<BackendChoice>> = RwLock::new(None);

impl BackendChoice {
    /// Every choice, in the order help texts list them.
    pub const ALL: [BackendChoice; 2] = [BackendChoice::Cpu, BackendChoice::Cuda];

    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Cpu => "cpu",
            BackendChoice::Cuda => "cuda",
        }
    }

    /// The allowed names, for error messages and help (`cpu, cuda`).
    pub fn allowed() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// The choice `TESSERA_BACKEND` names, if it is set (an unknown name is an error).
    pub fn from_env() -> Result<Option<BackendChoice>, MathError> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) => v
                .parse()
                .map(Some)
                .map_err(|e: MathError| MathError::OutOfRange {
                    name: "TESSERA_BACKEND",
                    value: v,
                    allowed: format!("one of {} ({e})", Self::allowed()),
                }),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(e) => Err(MathError::OutOfRange {
                name: "TESSERA_BACKEND",
                value: e.to_string(),
                allowed: format!("one of {}", Self::allowed()),
            }),
        }
    }

    /// Sets the choice of this whole process (what `tessera --backend` does): every later
    /// [`BackendChoice::process_default`] returns it, whatever `TESSERA_BACKEND` says.
    pub fn set_process_default(choice: BackendChoice) {
        *PROCESS_CHOICE.write().unwrap_or_else(|e| e.into_inner()) = Some(choice);
    }

    /// The backend this process computes on: the front end's setting, else `TESSERA_BACKEND`,
    /// else the CPU.
    pub fn process_default() -> Result<BackendChoice, MathError> {
        if let Some(c) = *PROCESS_CHOICE.read().unwrap_or_else(|e| e.into_inner()) {
            return Ok(c);
        }
        Ok(Self::from_env()?.unwrap_or_default())
    }
}

impl std::fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for BackendChoice {
    type Err = MathError;

    fn from_str(s: &str) -> Result<Self, MathError> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| MathError::OutOfRange {
                name: "backend",
                value: format!("{s:?}"),
                allowed: format!("one of {}", Self::allowed()),
            })
    }
}

/// The error of a choice this build cannot run.
#[cfg(not(feature = "cuda"))]
fn no_cuda() -> MathError {
    MathError::Unsupported("this build has no CUDA support: rebuild with --features cuda".into())
}

/// The error of a polynomial made by another variant of [`Compute`].
fn mixed(op: &'static str) -> MathError {
    MathError::Unsupported(format!(
        "{op}: the operands live on different compute backends; compute with one backend"
    ))
}

/// The compute backend chosen at run time ([`Compute::new`]): a backend that delegates every
/// primary to the one it holds.
#[derive(Clone, Debug)]
pub enum Compute {
    /// Computes on the CPU, 64-bit words.
    Cpu(CpuBackend),
    /// Computes on the CPU, 32-bit words.
    Cpu32(Cpu32Backend),
    /// Computes on an NVIDIA GPU.
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::CudaBackend),
}

/// A polynomial of [`Compute`]: the polynomial of the backend it was made on. Mixing
/// polynomials of two variants is a typed error.
#[derive(Clone, Debug)]
pub enum ComputePoly {
    /// A polynomial of the CPU backend.
    Cpu(RnsPoly),
    /// A polynomial of the 32-bit-word CPU backend.
    Cpu32(Poly32),
    /// A polynomial of the CUDA backend.
    #[cfg(feature = "cuda")]
    Cuda(<crate::cuda::CudaBackend as Backend>::Poly),
}

/// `$p` (a [`ComputePoly`] reference) as variant `$v`'s polynomial, or returns the
/// mixed-backend error.
macro_rules! unwrap_as {
    ($v:ident, $op:expr, $p:expr) => {
        match $p {
            ComputePoly::$v(x) => x,
            #[allow(unreachable_patterns)]
            _ => return Err(mixed($op)),
        }
    };
}

/// One arm of [`delegate!`]: unwraps the operands to variant `$v` (each `$p` a polynomial,
/// each `$l` a slice of polynomial references), runs `$body`, and maps its value back with
/// `$wrap` (`poly`, `pair` or `value`).
macro_rules! arm {
    ($v:ident, $op:expr, [$($p:ident),*], [$($l:ident),*], $body:expr, $wrap:ident) => {{
        $(let $p = unwrap_as!($v, $op, $p);)*
        $(let $l = $l
            .iter()
            .map(|p| Ok::<_, MathError>(unwrap_as!($v, $op, *p)))
            .collect::<Result<Vec<_>, _>>()?;)*
        $wrap!($v, $body)
    }};
}

/// Runs `$body` on the held backend (bound to `$b`) with the operands unwrapped to its
/// polynomial type: the one `match` over the variants that every primary shares. A new backend
/// adds one arm here and one variant to each enum.
macro_rules! delegate {
    ($self:ident, $op:expr, |$b:ident $(, $p:ident)* $(; $l:ident)*| $body:expr, $wrap:ident) => {
        match $self {
            Compute::Cpu($b) => arm!(Cpu, $op, [$($p),*], [$($l),*], $body, $wrap),
            Compute::Cpu32($b) => arm!(Cpu32, $op, [$($p),*], [$($l),*], $body, $wrap),
            #[cfg(feature = "cuda")]
            Compute::Cuda($b) => arm!(Cuda, $op, [$($p),*], [$($l),*], $body, $wrap),
        }
    };
}

/// `$body`'s polynomial, in the variant's [`ComputePoly`].
macro_rules! poly {
    ($v:ident, $body:expr) => {
        $body.map(ComputePoly::$v)
    };
}

/// `$body`'s list of polynomials, each in the variant's [`ComputePoly`].
macro_rules! polys {
    ($v:ident, $body:expr) => {
        $body.map(|ps| ps.into_iter().map(ComputePoly::$v).collect())
    };
}

/// `$body`'s value as it is (no polynomial in it).
macro_rules! value {
    ($v:ident, $body:expr) => {
        $body
    };
}

/// `$body`'s pair of polynomials, each in the variant's [`ComputePoly`].
macro_rules! pair {
    ($v:ident, $body:expr) => {
        $body.map(|(x, y)| (ComputePoly::$v(x), ComputePoly::$v(y)))
    };
}

impl Backend for Compute {
    type Poly = ComputePoly;

    fn ring(&self) -> &Arc<RingContext> {
        match self {
            Compute::Cpu(b) => b.ring(),
            Compute::Cpu32(b) => b.ring(),
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.ring(),
        }
    }
    /// The limbs of `p` as the backend that made it reports them (an empty set for a
    /// polynomial of another variant, which every primary then refuses).
    fn limbs(&self, p: &ComputePoly) -> Vec<usize> {
        match (self, p) {
            (Compute::Cpu(b), ComputePoly::Cpu(x)) => b.limbs(x),
            (Compute::Cpu32(b), ComputePoly::Cpu32(x)) => b.limbs(x),
            #[cfg(feature = "cuda")]
            (Compute::Cuda(b), ComputePoly::Cuda(x)) => b.limbs(x),
            #[allow(unreachable_patterns)]
            _ => Vec::new(),
        }
    }
    /// The representation of `p` (coefficient for a polynomial of another variant, which
    /// every primary then refuses).
    fn repr(&self, p: &ComputePoly) -> Representation {
        match (self, p) {
            (Compute::Cpu(b), ComputePoly::Cpu(x)) => b.repr(x),
            (Compute::Cpu32(b), ComputePoly::Cpu32(x)) => b.repr(x),
            #[cfg(feature = "cuda")]
            (Compute::Cuda(b), ComputePoly::Cuda(x)) => b.repr(x),
            #[allow(unreachable_patterns)]
            _ => Representation::Coefficient,
        }
    }
    fn load(&mut self, host: &RnsPoly, kind: Kind) -> Result<ComputePoly, MathError> {
        delegate!(self, "load", |b| b.load(host, kind), poly)
    }
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> Result<ComputePoly, MathError> {
        delegate!(self, "load", |b| b.load_host(host, kind), poly)
    }
    fn store(&mut self, p: &ComputePoly) -> Result<RnsPoly, MathError> {
        delegate!(self, "store", |b, p| b.store(p), value)
    }
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        kind: Kind,
    ) -> Result<ComputePoly, MathError> {
        delegate!(
            self,
            "expand_seed",
            |b| b.expand_seed(seed, limbs, kind),
            poly
        )
    }
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&ComputePoly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(ComputePoly, ComputePoly), MathError> {
        delegate!(
            self,
            "dot_pair_seeded_key",
            |b; ups| b.dot_pair_seeded_key(&ups, key_b, seeds, limbs),
            pair
        )
    }
    fn automorphism_dot_pair_seeded_key(
        &mut self,
        ups: &[&ComputePoly],
        g: u64,
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(ComputePoly, ComputePoly), MathError> {
        delegate!(
            self,
            "automorphism_dot_pair_seeded_key",
            |b; ups| b.automorphism_dot_pair_seeded_key(&ups, g, key_b, seeds, limbs),
            pair
        )
    }
    fn ntt(&mut self, p: &mut ComputePoly) -> Result<(), MathError> {
        delegate!(self, "ntt", |b, p| b.ntt(p), value)
    }
    fn intt(&mut self, p: &mut ComputePoly) -> Result<(), MathError> {
        delegate!(self, "intt", |b, p| b.intt(p), value)
    }
    fn add(&mut self, a: &ComputePoly, c: &ComputePoly) -> Result<ComputePoly, MathError> {
        delegate!(self, "add", |b, a, c| b.add(a, c), poly)
    }
    fn add_assign(&mut self, a: &mut ComputePoly, c: &ComputePoly) -> Result<(), MathError> {
        delegate!(self, "add", |b, a, c| b.add_assign(a, c), value)
    }
    fn sub(&mut self, a: &ComputePoly, c: &ComputePoly) -> Result<ComputePoly, MathError> {
        delegate!(self, "sub", |b, a, c| b.sub(a, c), poly)
    }
    fn neg(&mut self, a: &ComputePoly) -> Result<ComputePoly, MathError> {
        delegate!(self, "neg", |b, a| b.neg(a), poly)
    }
    fn mul(&mut self, a: &ComputePoly, c: &ComputePoly) -> Result<ComputePoly, MathError> {
        delegate!(self, "mul", |b, a, c| b.mul(a, c), poly)
    }
    fn mul_acc(
        &mut self,
        acc: &mut ComputePoly,
        a: &ComputePoly,
        c: &ComputePoly,
    ) -> Result<(), MathError> {
        delegate!(self, "mul_acc", |b, acc, a, c| b.mul_acc(acc, a, c), value)
    }
    fn add_scalar(&mut self, a: &ComputePoly, c: &[u64]) -> Result<ComputePoly, MathError> {
        delegate!(self, "add_scalar", |b, a| b.add_scalar(a, c), poly)
    }
    fn dot(&mut self, a: &[&ComputePoly], c: &[&ComputePoly]) -> Result<ComputePoly, MathError> {
        delegate!(self, "dot", |b; a; c| b.dot(&a, &c), poly)
    }
    fn mul_scalar(&mut self, a: &ComputePoly, c: &[u64]) -> Result<ComputePoly, MathError> {
        delegate!(self, "mul_scalar", |b, a| b.mul_scalar(a, c), poly)
    }
    fn automorphism(&mut self, a: &ComputePoly, g: u64) -> Result<ComputePoly, MathError> {
        delegate!(self, "automorphism", |b, a| b.automorphism(a, g), poly)
    }
    fn bconv(
        &mut self,
        a: &ComputePoly,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<ComputePoly, MathError> {
        delegate!(self, "bconv", |b, a| b.bconv(a, to, mode), poly)
    }
    fn sub_mul_scalar(
        &mut self,
        a: &ComputePoly,
        c: &ComputePoly,
        k: &[u64],
    ) -> Result<ComputePoly, MathError> {
        delegate!(
            self,
            "sub_mul_scalar",
            |b, a, c| b.sub_mul_scalar(a, c, k),
            poly
        )
    }
    fn extend_digit(
        &mut self,
        digit: &ComputePoly,
        own: &ComputePoly,
        to: &[usize],
    ) -> Result<ComputePoly, MathError> {
        delegate!(
            self,
            "extend_digit",
            |b, digit, own| b.extend_digit(digit, own, to),
            poly
        )
    }
    fn mod_up_digits(
        &mut self,
        coeff: &ComputePoly,
        own: &ComputePoly,
        digits: &[Vec<usize>],
        to: &[usize],
    ) -> Result<Vec<ComputePoly>, MathError> {
        delegate!(
            self,
            "mod_up_digits",
            |b, coeff, own| b.mod_up_digits(coeff, own, digits, to),
            polys
        )
    }
    fn mod_up_dot_pair_seeded_key(
        &mut self,
        coeff: &ComputePoly,
        own: &ComputePoly,
        digits: &[Vec<usize>],
        to: &[usize],
        key_b: &[HostPoly],
        seeds: &[Seed],
    ) -> Result<(ComputePoly, ComputePoly), MathError> {
        delegate!(
            self,
            "mod_up_dot_pair_seeded_key",
            |b, coeff, own| b.mod_up_dot_pair_seeded_key(coeff, own, digits, to, key_b, seeds),
            pair
        )
    }
    fn select_limbs(&mut self, a: &ComputePoly, keep: &[usize]) -> Result<ComputePoly, MathError> {
        delegate!(self, "select_limbs", |b, a| b.select_limbs(a, keep), poly)
    }
    fn concat(
        &mut self,
        parts: &[&ComputePoly],
        limbs: &[usize],
    ) -> Result<ComputePoly, MathError> {
        delegate!(self, "concat", |b; parts| b.concat(&parts, limbs), poly)
    }
    fn extend_limb(&mut self, a: &ComputePoly, to: &[usize]) -> Result<ComputePoly, MathError> {
        delegate!(self, "extend_limb", |b, a| b.extend_limb(a, to), poly)
    }
    fn begin_op(&mut self, name: &'static str, level: usize) {
        match self {
            Compute::Cpu(b) => b.begin_op(name, level),
            Compute::Cpu32(b) => b.begin_op(name, level),
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.begin_op(name, level),
        }
    }
    fn end_op(&mut self) {
        match self {
            Compute::Cpu(b) => b.end_op(),
            Compute::Cpu32(b) => b.end_op(),
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.end_op(),
        }
    }
    fn synchronize(&mut self) -> Result<(), MathError> {
        match self {
            Compute::Cpu(b) => b.synchronize(),
            Compute::Cpu32(b) => b.synchronize(),
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.synchronize(),
        }
    }
    fn device_report(&self) -> Option<crate::DeviceReport> {
        match self {
            Compute::Cpu(_) | Compute::Cpu32(_) => None,
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.device_report(),
        }
    }
}

impl Compute {
    /// Which choice this backend is.
    pub fn choice(&self) -> BackendChoice {
        match self {
            Compute::Cpu(_) | Compute::Cpu32(_) => BackendChoice::Cpu,
            #[cfg(feature = "cuda")]
            Compute::Cuda(_) => BackendChoice::Cuda,
        }
    }

    /// The word size of this backend's limbs: 32 (the CPU's `Cpu32Backend`, the CUDA
    /// backend's `_w32` kernels) or 64.
    pub fn word(&self) -> Word {
        match self {
            Compute::Cpu(_) => Word::W64,
            Compute::Cpu32(_) => Word::W32,
            #[cfg(feature = "cuda")]
            Compute::Cuda(b) => b.word(),
        }
    }

    /// The backend `choice` over `ring`, or a typed error saying why it cannot run here.
    pub fn new(ring: Arc<RingContext>, choice: BackendChoice) -> Result<Self, MathError> {
        match choice {
            // The word size per CPU: 32-bit words when the ring fits them and they measure
            // faster on this kernel, or as `TESSERA_WORD` says (refused when 32 cannot hold
            // the ring's primes).
            BackendChoice::Cpu => Ok(match Word::choose(None, &ring)? {
                Word::W32 => Compute::Cpu32(Cpu32Backend::new(ring)?),
                Word::W64 => Compute::Cpu(CpuBackend::new(ring)),
            }),
            BackendChoice::Cuda => Self::cuda(ring),
        }
    }

    /// The backend of this process's choice ([`BackendChoice::process_default`]) over `ring`.
    pub fn from_default(ring: Arc<RingContext>) -> Result<Self, MathError> {
        Self::new(ring, BackendChoice::process_default()?)
    }

    #[cfg(feature = "cuda")]
    fn cuda(ring: Arc<RingContext>) -> Result<Self, MathError> {
        crate::cuda::CudaBackend::new(ring).map(Compute::Cuda)
    }

    #[cfg(not(feature = "cuda"))]
    fn cuda(_ring: Arc<RingContext>) -> Result<Self, MathError> {
        Err(no_cuda())
    }

    /// The CUDA backend over `ring` in `word`-sized words (32 needs every prime below 2^30).
    #[cfg(feature = "cuda")]
    pub fn cuda_with_word(ring: Arc<RingContext>, word: Word) -> Result<Self, MathError> {
        crate::cuda::CudaBackend::with_word(ring, word).map(Compute::Cuda)
    }

    /// The CUDA backend: not built into this binary (the `cuda` feature).
    #[cfg(not(feature = "cuda"))]
    pub fn cuda_with_word(_ring: Arc<RingContext>, _word: Word) -> Result<Self, MathError> {
        Err(no_cuda())
    }

    /// Whether `choice` can compute in this process: `Ok` with a short description, or the
    /// typed error saying why not (no CUDA in this build, no driver or GPU). Builds the
    /// backend over a 16-coefficient ring to find out; never panics.
    pub fn available(choice: BackendChoice) -> Result<String, MathError> {
        let ring = RingContext::new(16, &generate_ntt_primes(30, 16, 1, &[])?)?;
        match Self::new(ring, choice)? {
            Compute::Cpu(_) => Ok(format!(
                "CPU, 64-bit words, kernel {}",
                tessera_math::simd::active().name()
            )),
            Compute::Cpu32(b) => Ok(format!(
                "CPU, 32-bit words where every prime is below 2^30 (64-bit otherwise), kernel {}",
                b.kernel().name()
            )),
            #[allow(unreachable_patterns)]
            _ => Ok(format!("{choice} available")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{check, Config};

    #[test]
    fn names_parse_and_print_and_bad_names_list_the_allowed() {
        for c in BackendChoice::ALL {
            assert_eq!(c.to_string().parse::<BackendChoice>().unwrap(), c);
        }
        assert_eq!(
            " CPU ".parse::<BackendChoice>().unwrap(),
            BackendChoice::Cpu
        );
        let e = "gpu".parse::<BackendChoice>().unwrap_err();
        assert!(matches!(
            e,
            MathError::OutOfRange {
                name: "backend",
                ..
            }
        ));
        assert!(e.to_string().contains("one of cpu, cuda"), "{e}");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_is_a_typed_error() {
        let ring = RingContext::new(16, &generate_ntt_primes(30, 16, 1, &[]).unwrap()).unwrap();
        let e = Compute::new(ring, BackendChoice::Cuda).unwrap_err();
        assert_eq!(e, no_cuda());
        assert!(e.to_string().contains("--features cuda"));
        let reason = Compute::available(BackendChoice::Cuda).unwrap_err();
        assert!(reason.to_string().contains("no CUDA support"), "{reason}");
        assert!(Compute::available(BackendChoice::Cpu).is_ok());
    }

    /// `Compute::Cpu` passes the conformance suite (it must equal the CPU backend exactly).
    #[test]
    fn compute_cpu_conforms() {
        let cfg = Config::degrees(4..=8);
        let s = check(|ring| Compute::new(ring, BackendChoice::Cpu), &cfg).unwrap();
        assert!(s.skipped.is_empty());
        assert_eq!(s.rings.len(), cfg.rings.len());
    }
}
