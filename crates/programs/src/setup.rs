//! What every bootstrapped program sets up: its parameter set (a bootstrapping preset), the
//! bootstrapping circuit at the program's slot count, and the keys, generated from a fixed
//! seed so a computed run and a recorded run load the same objects.

use crate::counter::BOOT;
use crate::error::{ProgramError, Result};
use crate::levels::LevelBudget;
use std::sync::Arc;
use tessera_backend::Backend;
use tessera_ckks::bootstrap::{BootstrapKeys, BootstrapParameters, Bootstrapper};
use tessera_ckks::{
    Ciphertext, CkksContext, Evaluator, KeyGenerator, KeySwitchDataflow, KeySwitchPlan, Parameters,
    ParametersLiteral, SecretKey,
};
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

/// The bootstrapping parameter sets programs run at: the accelerator papers' (`ark`: 8
/// levels between bootstrappings, `cifher`: 9, `reed`: 15, `h3`: 15, `lattigo`: 9,
/// `reed-dnum3`: 6) and `test-program`, the insecure CI set (N = 2^10, 10 levels).
pub const PARAMETER_SETS: &[&str] = &[
    "ark",
    "cifher",
    "reed",
    "h3",
    "lattigo",
    "reed-dnum3",
    "test-program",
];

/// Above this many bytes of rotation keys they are made on first use instead of all up front
/// (the limit the simulator's bootstrapping workload uses): `reed`'s dnum = L + 1 keys are
/// 0.5 GB each. Inside [`recording_shapes`] the keys are shapes and the factory keeps every
/// one it makes, so a recording makes each key once and no key material.
pub const EAGER_KEY_BYTES: usize = 4 << 30;

/// The environment variable that overrides [`EAGER_KEY_BYTES`], in GB: a host with more
/// memory (a GPU machine) keeps every rotation key instead of remaking keys on the CPU
/// during the run (`TESSERA_EAGER_KEY_GB=64 tessera run resnet20 --backend cuda`).
pub const EAGER_KEY_ENV: &str = "TESSERA_EAGER_KEY_GB";

/// The byte limit below which a program's rotation keys are all made up front:
/// [`EAGER_KEY_ENV`] if set (0 to 4096 GB), else [`EAGER_KEY_BYTES`].
///
/// ```
/// use tessera_programs::setup::{eager_key_bytes, EAGER_KEY_BYTES};
/// assert_eq!(eager_key_bytes(None).unwrap(), EAGER_KEY_BYTES);
/// assert_eq!(eager_key_bytes(Some("0.5")).unwrap(), 500_000_000);
/// assert!(eager_key_bytes(Some("-1")).unwrap_err().to_string().contains("TESSERA_EAGER_KEY_GB"));
/// ```
pub fn eager_key_bytes(env: Option<&str>) -> Result<usize> {
    gigabytes(EAGER_KEY_ENV, env, EAGER_KEY_BYTES)
}

/// A byte limit given in GB by the environment variable `name` (its value `env`: 0 to 4096
/// GB), `default` when it is unset ([`tessera_math::key_cache::gigabytes`]).
pub fn gigabytes(name: &'static str, env: Option<&str>, default: usize) -> Result<usize> {
    tessera_math::key_cache::gigabytes(name, env, default).map_err(|e| match e {
        tessera_math::MathError::OutOfRange {
            name,
            value,
            allowed,
        } => ProgramError::Invalid {
            name,
            value,
            allowed,
        },
        other => ProgramError::from(other),
    })
}

/// The CI set: `test-boot`'s circuit (2 + 9 + 2 levels, sparse secret h = 32) at N = 2^10 with
/// ten 45-bit user levels instead of three, so programs of 5-level stages run two stages per
/// bootstrapping. INSECURE (N = 2^10); for tests and quick runs only.
fn test_program_literal() -> ParametersLiteral {
    let base = tessera_ckks::params::preset_literal("test-boot").expect("test-boot is a preset");
    ParametersLiteral {
        name: "test-program".into(),
        log_q: [vec![60], vec![45; 10], vec![60; 13]].concat(),
        source: "test only: N = 2^10, test-boot's circuit with ten user levels (INSECURE)",
        ..base
    }
}

thread_local! {
    /// Whether [`context`] makes shape-only contexts (inside [`recording_shapes`]).
    static SHAPE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every context the programs make ([`context`]) shape-only
/// (`CkksContext::shape_only`): keys and plaintexts are shapes with identities and no data,
/// so recording a program for the simulator costs no key generation and no encoding, and its
/// instructions, host ids included, are those a recording of data gives
/// (`tests::shape_recording_is_the_recording_of_data`). The recording entry points
/// ([`crate::record`], [`crate::workloads::load`]) run in it; a program computed on the CPU
/// never does. The mode is per thread and restored when `f` returns or unwinds.
pub fn recording_shapes<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHAPE_ONLY.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SHAPE_ONLY.with(|c| c.replace(true)));
    f()
}

/// How a program's circuit is evaluated, beyond its parameter set's own choices: ARK's
/// bootstrapping techniques it may add (ark.md IV-A and IV-B), what `tessera simulate
/// --workload PROGRAM --min-ks --of-limb` and a target row's `min_ks` / `of_limb` ask for, as
/// they do of the `bootstrap` workload; and the order every key switch visits its digits
/// (`--streamed-keyswitch`), as the HE-operation and `bootstrap` workloads take it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CircuitOptions {
    /// Minimum key-switching (multi-hop rotations) in the DFTs.
    pub min_ks: bool,
    /// OF-Limb plaintexts for the DFT diagonals.
    pub of_limb: bool,
    /// Double hoisting in the DFTs (`BootstrapParameters::double_hoisting`): not one of
    /// ARK's techniques but a faster evaluation of the same circuit (one ModDown per part
    /// per matrix).
    pub double_hoisting: bool,
    /// The key-switch dataflow of every evaluator the program makes ([`evaluator`]), in its
    /// own operations and its bootstrappings. Streamed is the order of machines without room
    /// for all extended digits (reed.md Algorithm 3; Lattigo's gadget product, which
    /// cifher.md V-B adopts); both orders compute the same values bit for bit, so only a
    /// recording's instruction stream, and what a simulated machine keeps on chip, change.
    pub dataflow: KeySwitchDataflow,
}

impl CircuitOptions {
    /// Whether these options change a bootstrapping circuit (the dataflow applies to every
    /// key switch, so it also means something to a program that never bootstraps).
    pub fn changes_bootstrapping(&self) -> bool {
        self.min_ks || self.of_limb || self.double_hoisting
    }
}

thread_local! {
    /// The options [`parameter_set`] adds (inside [`with_circuit`]) and whether a circuit was
    /// made with them.
    static CIRCUIT: std::cell::Cell<(CircuitOptions, bool)> =
        const {
            std::cell::Cell::new((
                CircuitOptions {
                    min_ks: false,
                    of_limb: false,
                    double_hoisting: false,
                    dataflow: KeySwitchDataflow::Batched,
                },
                false,
            ))
        };
}

/// Runs `f` with `opts` turned on in every bootstrapping circuit the programs make
/// ([`parameter_set`]; a set's own options stay on either way, as in the `bootstrap`
/// workload). Returns `f`'s result and whether a circuit was made, so a caller can refuse the
/// options for a program that does not bootstrap. Per thread, restored when `f` returns or
/// unwinds, like [`recording_shapes`].
pub fn with_circuit<T>(opts: CircuitOptions, f: impl FnOnce() -> T) -> (T, bool) {
    struct Restore((CircuitOptions, bool));
    impl Drop for Restore {
        fn drop(&mut self) {
            CIRCUIT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CIRCUIT.with(|c| c.replace((opts, false))));
    let out = f();
    (out, CIRCUIT.with(|c| c.get().1))
}

/// An evaluator over `backend` with the key-switch dataflow of [`with_circuit`]'s options
/// (batched outside it): every evaluator a program computes or records with is made here, so
/// `--streamed-keyswitch` reaches all of its key switches.
pub fn evaluator<B: Backend>(ctx: &Arc<CkksContext>, backend: B) -> Result<Evaluator<B>> {
    let mut ev = Evaluator::new(ctx, backend)?;
    ev.set_key_switch_dataflow(CIRCUIT.with(|c| c.get().0.dataflow));
    Ok(ev)
}

/// The circuit options of `boot` as a label suffix (`+min-ks`, `+of-limb`, `+no-hoisting`),
/// empty for a plain circuit: recordings name the circuit they ran.
pub fn circuit_suffix(boot: &Bootstrapper) -> String {
    let bp = boot.parameters();
    [
        (bp.min_ks, "+min-ks"),
        (bp.of_limb, "+of-limb"),
        (!bp.hoisting, "+no-hoisting"),
        (bp.double_hoisting, "+double-hoisting"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, s)| *s)
    .collect()
}

/// A CKKS context for `params`: shape-only inside [`recording_shapes`], computing otherwise.
pub fn context(params: Parameters) -> Result<Arc<CkksContext>> {
    Ok(if SHAPE_ONLY.with(|c| c.get()) {
        CkksContext::shape_only(params)?
    } else {
        CkksContext::new(params)?
    })
}

/// The CKKS parameters and bootstrapping circuit of a set in [`PARAMETER_SETS`] or of a
/// parameter file with a `[bootstrap]` table (`tessera_ckks::params_file`), bootstrapping
/// `slots` slots, with the options of [`with_circuit`] added.
pub fn parameter_set(name: &str, slots: usize) -> Result<(Arc<CkksContext>, Bootstrapper)> {
    let unknown = || ProgramError::Invalid {
        name: "params",
        value: name.to_string(),
        allowed: format!(
            "{} or a parameter file with a [bootstrap] table",
            PARAMETER_SETS.join(", ")
        ),
    };
    if !PARAMETER_SETS.contains(&name) && !std::path::Path::new(name).is_file() {
        return Err(unknown());
    }
    let (params, mut bp) = if name == "test-program" {
        let (_, bp) = BootstrapParameters::preset("test-boot")?;
        (Parameters::new(test_program_literal())?, bp)
    } else {
        tessera_ckks::params_file::resolve_bootstrap(name)?
    };
    if slots > params.max_slots() || !slots.is_power_of_two() {
        return Err(ProgramError::Invalid {
            name: "slots",
            value: slots.to_string(),
            allowed: format!("a power of two up to N/2 = {}", params.max_slots()),
        });
    }
    bp.slots = Some(slots);
    let (opts, _) = CIRCUIT.with(|c| c.get());
    bp.min_ks |= opts.min_ks;
    bp.of_limb |= opts.of_limb;
    bp.double_hoisting |= opts.double_hoisting;
    CIRCUIT.with(|c| c.set((opts, true)));
    let ctx = context(params)?;
    let boot = Bootstrapper::new(&ctx, bp)?;
    Ok((ctx, boot))
}

/// A prepared program environment: context, circuit, secret key and evaluation keys.
pub struct Setup {
    /// The CKKS context.
    pub ctx: Arc<CkksContext>,
    /// The bootstrapping circuit (the program's slot count).
    pub boot: Bootstrapper,
    /// Sparse circuits at fewer slots, ascending ([`Setup::with_sparse`]): a ciphertext whose
    /// slots repeat with a shorter period is bootstrapped by the smallest circuit that holds
    /// one period ([`Setup::circuit_for`]), as FHE-MP-CNN bootstraps ResNet-20's stages at
    /// 2^14, 2^13 and 2^12 slots.
    pub sparse: Vec<Bootstrapper>,
    /// The key generator (encryption).
    pub kg: KeyGenerator,
    /// The secret key.
    pub sk: SecretKey,
    /// Bootstrapping keys plus the program's rotations.
    pub keys: BootstrapKeys,
    /// Whether rotation keys are made on first use ([`EAGER_KEY_BYTES`]).
    pub keys_on_demand: bool,
    /// The parameter set's name.
    pub params_name: String,
}

/// The fixed key seed of program runs.
fn seed() -> Seed {
    Seed([0x3c; 32])
}

impl Setup {
    /// Parameter set `params`, a circuit for `slots` slots, and keys for the circuit and
    /// `rotations`.
    pub fn new(params: &str, slots: usize, rotations: &[i64]) -> Result<Self> {
        Self::with_sparse(params, slots, &[], rotations)
    }

    /// [`Setup::new`] plus a sparse circuit for each of `sparse_slots` below `slots` (powers
    /// of two; duplicates and `slots` itself are ignored), all on the same context with one
    /// key set: the evaluation keys hold every circuit's rotations. The circuits have the
    /// same depth, so a bootstrapping returns to the same level whichever runs.
    ///
    /// ```
    /// use tessera_programs::setup::Setup;
    /// let s = Setup::with_sparse("test-program", 256, &[64, 128, 64], &[]).unwrap();
    /// let slots: Vec<usize> = s.sparse.iter().map(|b| b.slots()).collect();
    /// assert_eq!(slots, [64, 128]);
    /// assert_eq!(s.circuit_for(32).unwrap().slots(), 64);
    /// assert_eq!(s.circuit_for(128).unwrap().slots(), 128);
    /// assert_eq!(s.circuit_for(256).unwrap().slots(), 256);
    /// assert!(Setup::with_sparse("test-program", 256, &[48], &[]).is_err());
    /// ```
    pub fn with_sparse(
        params: &str,
        slots: usize,
        sparse_slots: &[usize],
        rotations: &[i64],
    ) -> Result<Self> {
        let (ctx, boot) = parameter_set(params, slots)?;
        let mut wanted: Vec<usize> = sparse_slots
            .iter()
            .copied()
            .filter(|&s| s != slots)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut sparse = Vec::with_capacity(wanted.len());
        for s in wanted {
            if !s.is_power_of_two() || s > slots || s < 2 {
                return Err(ProgramError::Invalid {
                    name: "sparse bootstrapping slots",
                    value: s.to_string(),
                    allowed: format!("a power of two from 2 to the program's {slots} slots"),
                });
            }
            let mut bp = boot.parameters().clone();
            bp.slots = Some(s);
            let b = Bootstrapper::new(&ctx, bp)?;
            debug_assert_eq!(b.output_level(), boot.output_level());
            sparse.push(b);
        }
        let mut kg = KeyGenerator::from_seed(&ctx, &seed())?;
        let sk = kg.secret_key()?;
        let mut all = boot.rotations();
        let mut rotations = rotations.to_vec();
        for b in &sparse {
            rotations.extend(b.rotations());
        }
        let rotations = &rotations[..];
        all.extend_from_slice(rotations);
        all.sort_unstable();
        all.dedup();
        let per_key = KeySwitchPlan::fixed(ctx.params()).key_words(ctx.params()) * 8;
        let limit = eager_key_bytes(std::env::var(EAGER_KEY_ENV).ok().as_deref())?;
        let keys_on_demand = (all.len() + 1) * per_key > limit;
        let keys = if keys_on_demand {
            // The circuit's encapsulation keys, and one on-demand factory for every rotation.
            let mut keys = boot.keygen_on_demand(&mut kg, &sk)?;
            keys.eval = kg.evaluation_keys_on_demand(&sk, &all, true)?;
            keys
        } else {
            boot.keygen_with(&mut kg, &sk, rotations)?
        };
        Ok(Self {
            ctx,
            boot,
            sparse,
            kg,
            sk,
            keys,
            keys_on_demand,
            params_name: params.to_string(),
        })
    }

    /// The circuit that bootstraps a vector whose slots repeat every `period` slots: the
    /// sparse circuit with the fewest slots that holds one period, else [`Setup::boot`].
    /// `period` must be a power of two no larger than the program's slots.
    pub fn circuit_for(&self, period: usize) -> Result<&Bootstrapper> {
        if !period.is_power_of_two() || period > self.boot.slots() {
            return Err(ProgramError::Invalid {
                name: "slot period",
                value: period.to_string(),
                allowed: format!(
                    "a power of two up to the program's {} slots",
                    self.boot.slots()
                ),
            });
        }
        Ok(self
            .sparse
            .iter()
            .find(|b| b.slots() >= period)
            .unwrap_or(&self.boot))
    }

    /// Every circuit: the program's, then the sparse ones.
    pub fn circuits(&self) -> impl Iterator<Item = &Bootstrapper> {
        std::iter::once(&self.boot).chain(&self.sparse)
    }

    /// The level budget: levels between bootstrappings, and the rule that places them.
    pub fn budget(&self) -> LevelBudget {
        LevelBudget::new(self.ctx.params(), self.boot.output_level())
    }

    /// Encrypts real `values` in `slots` slots at `level` with the default scale.
    pub fn encrypt(
        &mut self,
        values: &[f64],
        slots: usize,
        level: usize,
    ) -> Result<Ciphertext<RnsPoly>> {
        let pt = self
            .ctx
            .encode_real(values, slots, level, self.ctx.params().default_scale())?;
        Ok(self.kg.encrypt_sk(&pt, &self.sk)?)
    }

    /// Encrypts real `values` in `values.len()` slots at the level bootstrapping returns to:
    /// how a program's inputs start, so the first bootstrapping comes as late as it can.
    pub fn encrypt_top(&mut self, values: &[f64]) -> Result<Ciphertext<RnsPoly>> {
        let top = self.boot.output_level();
        self.encrypt(values, values.len(), top)
    }

    /// Decrypts and decodes the real parts.
    pub fn decrypt(&self, ct: &Ciphertext<RnsPoly>) -> Result<Vec<f64>> {
        let pt = tessera_ckks::decrypt(ct, &self.sk)?;
        Ok(self.ctx.decode(&pt)?.iter().map(|z| z.re).collect())
    }
}

/// Two ciphertexts of backend `B` (the weights `v` and `w` of a training program).
pub type Pair<B> = (
    Ciphertext<<B as Backend>::Poly>,
    Ciphertext<<B as Backend>::Poly>,
);

/// `ct` dropped to chain index `level` (unchanged if it is not above it).
pub fn drop_to<B: Backend>(
    ev: &mut Evaluator<B>,
    ct: &Ciphertext<B::Poly>,
    level: usize,
) -> Result<Ciphertext<B::Poly>> {
    Ok(if ct.level > level {
        ev.drop_levels(ct, ct.level - level)?
    } else {
        ct.clone()
    })
}

/// One bootstrapping inside a [`BOOT`] marker (so counts and traces see one operation).
pub fn bootstrap<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    ct: &Ciphertext<B::Poly>,
) -> Result<Ciphertext<B::Poly>> {
    ev.backend_mut().begin_op(BOOT, ct.level);
    let r = setup.boot.bootstrap(ev, ct, &setup.keys);
    ev.backend_mut().end_op();
    Ok(r?)
}

/// Real-message bootstrapping (imaginary-removing, `Bootstrapper::bootstrap_real`) inside one
/// [`BOOT`] marker: for programs whose slots are real, so the bootstrapping's imaginary error
/// is not carried into the next polynomial.
pub fn bootstrap_real<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    ct: &Ciphertext<B::Poly>,
) -> Result<Ciphertext<B::Poly>> {
    ev.backend_mut().begin_op(BOOT, ct.level);
    let r = setup.boot.bootstrap_real(ev, ct, &setup.keys);
    ev.backend_mut().end_op();
    Ok(r?)
}

/// [`bootstrap_real`] of a ciphertext whose slots repeat every `period` slots, by the circuit
/// [`Setup::circuit_for`] picks. A vector of `n` slots made of `n / s` copies of `s` values is
/// the same plaintext polynomial as those `s` values in `s` slots (sparse packing), so the
/// ciphertext is read as `s` slots for the sparse circuit and its output read back as `n`.
/// The period is the caller's claim about the values; the programs' clear replicas check it
/// (`resnet::slots::Clear`).
pub fn bootstrap_real_periodic<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    ct: &Ciphertext<B::Poly>,
    period: usize,
) -> Result<Ciphertext<B::Poly>> {
    let circuit = setup.circuit_for(period)?;
    if circuit.slots() == ct.slots {
        return bootstrap_real(setup, ev, ct);
    }
    if !ct.slots.is_multiple_of(circuit.slots()) {
        return Err(ProgramError::Invalid {
            name: "ciphertext slots",
            value: ct.slots.to_string(),
            allowed: format!(
                "a multiple of the sparse circuit's {} slots",
                circuit.slots()
            ),
        });
    }
    let sparse = Ciphertext {
        slots: circuit.slots(),
        ..ct.clone()
    };
    ev.backend_mut().begin_op(BOOT, ct.level);
    let r = circuit.bootstrap_real(ev, &sparse, &setup.keys);
    ev.backend_mut().end_op();
    Ok(Ciphertext {
        slots: ct.slots,
        ..r?
    })
}

/// Merged two-real bootstrapping (Cheddar's `kMergeTwoReal`, workloads.md 1) inside one
/// [`BOOT`] marker: `v + i w` bootstrapped once and split with one conjugation
/// (`Bootstrapper::bootstrap_two_real`). `v`, `w`: real vectors, same scale, the circuit's slot
/// count. Returns `(v, w)` at the bootstrapping's output level.
pub fn bootstrap_two_real<B: Backend>(
    setup: &Setup,
    ev: &mut Evaluator<B>,
    v: &Ciphertext<B::Poly>,
    w: &Ciphertext<B::Poly>,
) -> Result<Pair<B>> {
    ev.backend_mut().begin_op(BOOT, v.level);
    let r = setup.boot.bootstrap_two_real(ev, v, w, &setup.keys);
    ev.backend_mut().end_op();
    Ok(r?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_backend::CpuBackend;

    #[test]
    fn unknown_set_lists_the_allowed() {
        let e = parameter_set("nope", 256).err().unwrap().to_string();
        assert!(e.contains("ark, cifher, reed, h3"), "{e}");
        let e = parameter_set("test-program", 3).err().unwrap().to_string();
        assert!(e.contains("power of two"), "{e}");
    }

    /// Recording at `reed` (dnum = L + 1: rotation keys of 0.5 GB each, made on first use)
    /// generates no key material and makes each rotation key once: one bootstrapping and a
    /// few program rotations, twice, on the trace backend inside [`recording_shapes`].
    #[test]
    fn recording_at_reed_makes_each_key_once_without_data() {
        use tessera_backend::TraceBackend;
        recording_shapes(|| {
            let rotations = [1, 2, 4];
            let mut s = Setup::new("reed", 256, &rotations).unwrap();
            assert!(s.keys_on_demand, "reed's keys are made on first use");
            let factory = s.keys.eval.on_demand.clone().unwrap();
            let relin = s.keys.eval.relin.as_ref().unwrap();
            assert!(relin.is_shape_only(), "the relinearisation key holds data");
            let ct = s.encrypt_top(&[0.5; 256]).unwrap();
            let mut ev = Evaluator::new(&s.ctx, TraceBackend::trace(s.ctx.ring().clone())).unwrap();
            let mut x = ev.load(&ct).unwrap();
            let mut made = 0;
            for round in 0..2 {
                for r in rotations {
                    x = ev.rotate(&x, r, &s.keys.eval).unwrap();
                }
                x = bootstrap(&s, &mut ev, &x).unwrap();
                if round == 0 {
                    made = factory.keys_made();
                    assert!(made > rotations.len(), "{made} keys for a bootstrapping");
                }
            }
            assert_eq!(factory.keys_made(), made, "a key was made again");
            let n = s.ctx.params().n();
            let mut steps = s.boot.rotations();
            steps.extend_from_slice(&rotations);
            for r in steps {
                let g = tessera_math::automorphism::galois_element(r, n).unwrap();
                assert!(
                    factory.key(g).unwrap().is_shape_only(),
                    "key {g} holds data"
                );
            }
        });
    }

    /// Merged two-real bootstrapping returns both halves, against the inputs in the clear.
    #[test]
    fn two_real_bootstrap_splits_both() {
        let mut s = Setup::new("test-program", 256, &[]).unwrap();
        assert_eq!(s.budget().after_boot, 10);
        let x: Vec<f64> = (0..256)
            .map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0)
            .collect();
        let y: Vec<f64> = (0..256)
            .map(|i| ((i * 11 % 97) as f64 / 40.0) - 1.2)
            .collect();
        let a = s.encrypt(&x, 256, 2).unwrap();
        let b = s.encrypt(&y, 256, 2).unwrap();
        let mut ev = Evaluator::new(&s.ctx, CpuBackend::new(s.ctx.ring().clone())).unwrap();
        let (a, b) = (ev.load(&a).unwrap(), ev.load(&b).unwrap());
        let (ox, oy) = bootstrap_two_real(&s, &mut ev, &a, &b).unwrap();
        assert_eq!(ox.level, s.boot.output_level());
        for (got, want) in [(ox, &x), (oy, &y)] {
            let d = s.decrypt(&ev.store(&got).unwrap()).unwrap();
            let err = d
                .iter()
                .zip(want.iter())
                .map(|(g, w)| (g - w).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-4, "max error {err}");
        }
    }
}
