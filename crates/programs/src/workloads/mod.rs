//! Built-in workloads: the instruction streams of HE operations and of bootstrapping,
//! recorded by running the CKKS evaluator on the trace backend (what is simulated is what
//! the CPU computes, design.md section 1). Keys come from a fixed seed, because the trace
//! names the objects it loads; [`record`] makes them as shapes (identities, no key material,
//! [`crate::setup::recording_shapes`]), each on-demand key made once per recording. CoFHEE's
//! 128-bit recordings are in [`wide`]. These lived in the simulator crate until session 28;
//! they moved here so the simulator depends on the trace format only (docs/simulator.md,
//! "Crate structure").

pub mod wide;

use crate::error::ProgramError;
use tessera_backend::trace::{Instr, Meta, Recorded};
use tessera_backend::TraceBackend;
use tessera_ckks::bootstrap::Bootstrapper;
use tessera_ckks::{
    Ciphertext, CkksContext, Evaluator, KeyGenerator, KeySwitchDataflow, KeySwitchPlan, Parameters,
};
use tessera_math::sampling::Seed;

/// The built-in workload names.
pub const WORKLOADS: &[&str] = &[
    "bootstrap",
    "hmult",
    "hrot",
    "keyswitch",
    "keyswitch-ext",
    "hadd",
    "pmult",
    "tensor",
    "ntt",
];

/// What to record.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    /// One of [`WORKLOADS`].
    pub name: String,
    /// CKKS preset or parameter file (for `bootstrap`: a bootstrapping preset, `ark` /
    /// `lattigo` / `h3` / `reed` / `cifher` / `test-boot`, or a file with `[bootstrap]`).
    pub params: String,
    /// Input level (HE operations; default: the top level).
    pub level: Option<usize>,
    /// OF-Limb plaintexts in bootstrapping's linear transforms (ark.md IV-B); `false`
    /// keeps the parameter set's own choice (its file's `[bootstrap]` table).
    pub of_limb: bool,
    /// Minimum key-switching (multi-hop rotations) in bootstrapping (ark.md IV-A); `false`
    /// keeps the set's own choice (`cifher` has it on).
    pub min_ks: bool,
    /// Hoisted baby steps in bootstrapping's DFTs (`BootstrapParameters::hoisting`); `false`
    /// rotates each baby step on its own (`true` keeps the set's own choice).
    pub hoisting: bool,
    /// Double hoisting in bootstrapping's DFTs (`BootstrapParameters::double_hoisting`);
    /// `false` keeps the set's own choice.
    pub double_hoisting: bool,
    /// Key-switch dataflow: batched (all digits, then inner products) or streamed (one
    /// digit at a time, reed.md Algorithm 3).
    pub dataflow: KeySwitchDataflow,
}

impl WorkloadSpec {
    /// `name` at `params` with the defaults (top level, no ARK options).
    pub fn new(name: &str, params: &str) -> Self {
        Self {
            name: name.to_string(),
            params: params.to_string(),
            level: None,
            of_limb: false,
            min_ks: false,
            hoisting: true,
            double_hoisting: false,
            dataflow: KeySwitchDataflow::Batched,
        }
    }
}

/// A recorded stream and what it is.
#[derive(Clone, Debug)]
pub struct Workload {
    pub label: String,
    pub instrs: Vec<Instr>,
    /// Slots of the ciphertext (n in T_A.S.).
    pub slots: usize,
    /// Levels left after the workload (bootstrapping) or its input level.
    pub level: usize,
}

/// Writes a result ciphertext back off-chip.
fn store(ev: &mut Evaluator<TraceBackend>, ct: &Ciphertext<Recorded<Meta>>) {
    let b = ev.backend_mut();
    b.record_store(&ct.c0);
    b.record_store(&ct.c1);
}

fn seed() -> Seed {
    Seed([0x5a; 32])
}

/// Where a workload's instructions come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Recorded here from the CKKS evaluator.
    Ckks,
    /// Recorded here from CoFHEE's 128-bit-word arithmetic.
    Wide,
    /// Read from a tessera-trace file.
    TraceFile,
}

/// Options that do not apply to `spec`'s workload are an error, not silently ignored:
/// bootstrapping's circuit options elsewhere, an input level for bootstrapping (it starts
/// from its preset's base level), and, for workloads not recorded from CKKS here (128-bit
/// CoFHEE workloads, trace files), the key-switch dataflow and the level.
fn options_fit(spec: &WorkloadSpec, origin: Origin) -> Result<(), ProgramError> {
    let unsupported = |what: &str| {
        let this = match origin {
            Origin::Wide => format!("'{}' at '{}' (128-bit words)", spec.name, spec.params),
            _ => format!("the trace file '{}'", spec.name),
        };
        Err(ProgramError::Unsupported(format!("{what}, not to {this}")))
    };
    if origin != Origin::Ckks {
        if spec.dataflow == KeySwitchDataflow::Streamed {
            return unsupported("--streamed-keyswitch applies to CKKS workloads recorded here");
        }
        if spec.level.is_some() {
            return unsupported("--level applies to CKKS HE-operation workloads");
        }
    }
    if spec.name == "bootstrap" {
        if spec.level.is_some() {
            return Err(ProgramError::Unsupported(
                "--level: bootstrapping starts from its preset's base level".into(),
            ));
        }
        return Ok(());
    }
    for (name, set) in [
        ("--min-ks (min_ks)", spec.min_ks),
        ("--of-limb (of_limb)", spec.of_limb),
        ("--no-hoisting (hoisting = false)", !spec.hoisting),
        ("--double-hoisting (double_hoisting)", spec.double_hoisting),
    ] {
        if set {
            return Err(ProgramError::Unsupported(format!(
                "{name} is an option of the bootstrap workload's circuit, not of '{}'",
                spec.name
            )));
        }
    }
    Ok(())
}

/// Records the stream of `spec`, keys and plaintexts as shapes without data
/// ([`crate::setup::recording_shapes`]: the same instructions as with data, at no cost).
pub fn record(spec: &WorkloadSpec) -> Result<Workload, ProgramError> {
    crate::setup::recording_shapes(|| record_with_data(spec))
}

/// [`record`] with keys generated and plaintexts encoded for real (outside
/// [`crate::setup::recording_shapes`]).
pub fn record_with_data(spec: &WorkloadSpec) -> Result<Workload, ProgramError> {
    options_fit(spec, Origin::Ckks)?;
    if spec.name == "bootstrap" {
        return bootstrap(spec);
    }
    Ok(record_levels_with_data(spec, &[spec.level])?.remove(0))
}

/// Records the HE-operation workload `spec` at each of `levels` (`None`: the top level),
/// generating its keys once (as shapes, like [`record`]).
pub fn record_levels(
    spec: &WorkloadSpec,
    levels: &[Option<usize>],
) -> Result<Vec<Workload>, ProgramError> {
    crate::setup::recording_shapes(|| record_levels_with_data(spec, levels))
}

fn record_levels_with_data(
    spec: &WorkloadSpec,
    levels: &[Option<usize>],
) -> Result<Vec<Workload>, ProgramError> {
    if !WORKLOADS.contains(&spec.name.as_str()) {
        return Err(ProgramError::Invalid {
            name: "workload",
            value: spec.name.clone(),
            allowed: format!("{} or a trace file", WORKLOADS.join(", ")),
        });
    }
    if spec.name == "bootstrap" {
        return Err(ProgramError::Unsupported(
            "bootstrapping runs from its own level; record it with `record`".into(),
        ));
    }
    let ctx = crate::setup::context(Parameters::resolve(&spec.params)?)?;
    let top = ctx.params().max_level();
    let min = if spec.name == "hmult" { 1 } else { 0 };
    for level in levels.iter().map(|l| l.unwrap_or(top)) {
        if level < min || level > top {
            return Err(ProgramError::Invalid {
                name: "level",
                value: level.to_string(),
                allowed: format!("{min} to L = {top}"),
            });
        }
    }
    let mut kg = KeyGenerator::from_seed(&ctx, &seed())?;
    let sk = kg.secret_key()?;
    let keys = match spec.name.as_str() {
        "hrot" => kg.evaluation_keys(&sk, &[1], false)?,
        _ => kg.evaluation_keys(&sk, &[], false)?,
    };
    levels
        .iter()
        .map(|l| one(spec, &ctx, &mut kg, &sk, &keys, l.unwrap_or(top)))
        .collect()
}

fn one(
    spec: &WorkloadSpec,
    ctx: &std::sync::Arc<CkksContext>,
    kg: &mut KeyGenerator,
    sk: &tessera_ckks::SecretKey,
    keys: &tessera_ckks::EvaluationKeys,
    level: usize,
) -> Result<Workload, ProgramError> {
    let slots = ctx.params().max_slots();
    let pt = ctx.encode_real(&[0.5], slots, level, ctx.params().default_scale())?;
    let ct = kg.encrypt_sk(&pt, sk)?;
    let mut ev = Evaluator::new(ctx, TraceBackend::trace(ctx.ring().clone()))?;
    ev.set_key_switch_dataflow(spec.dataflow);
    match spec.name.as_str() {
        "ntt" => {
            let x = ev.load(&ct)?;
            let b = ev.backend_mut();
            let mut c = x.c0.clone();
            tessera_backend::Backend::intt(b, &mut c)?;
            tessera_backend::Backend::ntt(b, &mut c)?;
        }
        "hmult" => {
            let x = ev.load(&ct)?;
            let y = ev.load(&ct)?;
            let z = ev.mul_relin_rescale(&x, &y, keys)?;
            store(&mut ev, &z);
        }
        "hadd" => {
            let x = ev.load(&ct)?;
            let y = ev.load(&ct)?;
            let z = ev.add(&x, &y)?;
            store(&mut ev, &z);
        }
        "tensor" => {
            let x = ev.load(&ct)?;
            let y = ev.load(&ct)?;
            let parts = ev.tensor(&x, &y)?;
            let b = ev.backend_mut();
            for d in &parts {
                b.record_store(d);
            }
        }
        "pmult" => {
            let x = ev.load(&ct)?;
            let z = ev.mul_plain(&x, &pt)?;
            store(&mut ev, &z);
        }
        "hrot" => {
            let x = ev.load(&ct)?;
            let z = ev.rotate(&x, 1, keys)?;
            store(&mut ev, &z);
        }
        "keyswitch-ext" => {
            // REED's KeySwitch macro-instruction: ModUp and inner product of c1 into Q_l P,
            // no ModDown (see `Evaluator::key_switch_extended`).
            let key = keys.relin.as_ref().expect("relinearisation key generated");
            let x = ev.load(&ct)?;
            let (u0, u1) = ev.key_switch_extended(&x.c1, level, key)?;
            let b = ev.backend_mut();
            b.record_store(&u0);
            b.record_store(&u1);
        }
        _ => {
            let key = keys.relin.as_ref().expect("relinearisation key generated");
            let x = ev.load(&ct)?;
            let z = ev.switch_key(&x, key)?;
            store(&mut ev, &z);
        }
    }
    Ok(Workload {
        label: format!("{}@{} level {level}", spec.name, spec.params),
        instrs: ev.backend().instructions().to_vec(),
        slots,
        level,
    })
}

/// A built-in workload (`spec.name` one of [`WORKLOADS`]) or, otherwise, a tessera-trace
/// file at the path `spec.name`.
pub fn load(spec: &WorkloadSpec) -> Result<Workload, ProgramError> {
    let wide = wide::wide_params(&spec.params).is_ok()
        && wide::WIDE_WORKLOADS.contains(&spec.name.as_str());
    let origin = if wide {
        Origin::Wide
    } else if WORKLOADS.contains(&spec.name.as_str()) {
        Origin::Ckks
    } else {
        Origin::TraceFile
    };
    // Built-in CKKS workloads are checked by `record`; a trace file that is not there is an
    // unknown workload first (below).
    if origin == Origin::Wide
        || (origin == Origin::TraceFile && std::path::Path::new(&spec.name).exists())
    {
        options_fit(spec, origin)?;
    }
    if wide {
        let w = wide::record_wide(&spec.name, &spec.params)?;
        return Ok(Workload {
            label: w.label,
            instrs: w.instrs,
            slots: w.n,
            level: 0,
        });
    }
    if WORKLOADS.contains(&spec.name.as_str()) {
        return record(spec);
    }
    let path = std::path::Path::new(&spec.name);
    if !path.exists() {
        return Err(ProgramError::Invalid {
            name: "workload",
            value: spec.name.clone(),
            allowed: format!(
                "{} (CKKS presets), {} (cofhee-n12, cofhee-n13), or a tessera-trace file",
                WORKLOADS.join(", "),
                wide::WIDE_WORKLOADS.join(", ")
            ),
        });
    }
    let (header, instrs) = tessera_backend::trace::read_trace_file(path)
        .map_err(|e| ProgramError::Trace(format!("{}: {e}", spec.name)))?;
    Ok(Workload {
        label: spec.name.clone(),
        instrs,
        slots: header.n / 2,
        level: 0,
    })
}

/// Above this many bytes of rotation and conjugation keys, recording makes each key when the
/// circuit first uses it instead of all up front (`Bootstrapper::keygen_on_demand`), holding
/// one rotation key at a time. The trace backend reads a key only for its limb set and the
/// fingerprint that names it (`Recorder::host_id`), so holding every key serves nothing:
/// holding `ark`'s hoisted circuit's keys raised the peak of recording its bootstrapping from
/// 3.85 to 6.2 GB (issue 25 item 1, docs/simulator.md "Streaming engine and compact traces").
/// The simulated program is the same either way (same operations, same key sizes); an
/// on-demand key is the same key each time it is made, so all its loads carry one id, and ids
/// are numbered in order of first appearance, so they equal the eager recording's.
const EAGER_KEY_BYTES: usize = 256 << 20;

/// Bytes the circuit's rotation and conjugation keys take when all are made up front.
fn eager_rotation_key_bytes(ctx: &CkksContext, boot: &Bootstrapper) -> usize {
    let per_key = KeySwitchPlan::fixed(ctx.params()).key_words(ctx.params()) * 8;
    (boot.rotations().len() + 1) * per_key
}

fn bootstrap(spec: &WorkloadSpec) -> Result<Workload, ProgramError> {
    bootstrap_with(spec, EAGER_KEY_BYTES, false)
}

/// [`bootstrap`] making rotation keys on first use above `eager_key_bytes` of them, and
/// keeping the encoded DFT diagonals or not. Recording holds neither (on-demand keys above
/// [`EAGER_KEY_BYTES`], no diagonals); holding both is what recording did before issue 25, and
/// the tests check that either way records the same instructions.
fn bootstrap_with(
    spec: &WorkloadSpec,
    eager_key_bytes: usize,
    keep_plaintexts: bool,
) -> Result<Workload, ProgramError> {
    // The set's own circuit options stay on unless its file turns them off (issue 25 item 7:
    // `cifher` keeps its minimum key-switching without `--min-ks`).
    let (params, mut bp) = tessera_ckks::params_file::resolve_bootstrap(&spec.params)?;
    bp.of_limb |= spec.of_limb;
    bp.min_ks |= spec.min_ks;
    bp.hoisting &= spec.hoisting;
    bp.double_hoisting |= spec.double_hoisting;
    let ctx = crate::setup::context(params)?;
    // One bootstrapping encodes each DFT diagonal once: keeping them would only hold them
    // (3.0 GB at `ark`).
    let boot = Bootstrapper::new(&ctx, bp)?.keep_plaintexts(keep_plaintexts);
    let mut kg = KeyGenerator::from_seed(&ctx, &seed())?;
    let sk = kg.secret_key()?;
    let keys = if eager_rotation_key_bytes(&ctx, &boot) > eager_key_bytes {
        boot.keygen_on_demand(&mut kg, &sk)?
    } else {
        boot.keygen(&mut kg, &sk)?
    };
    let slots = ctx.params().max_slots();
    let pt = ctx.encode_real(
        &[0.5],
        slots,
        ctx.params().base_level(),
        ctx.params().default_scale(),
    )?;
    let ct = kg.encrypt_sk(&pt, &sk)?;
    let mut ev = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone()))?;
    ev.set_key_switch_dataflow(spec.dataflow);
    let x = ev.load(&ct)?;
    let out = boot.bootstrap(&mut ev, &x, &keys)?;
    store(&mut ev, &out);
    let label = format!(
        "bootstrap@{}{}",
        spec.params,
        crate::setup::circuit_suffix(&boot)
    );
    Ok(Workload {
        label,
        instrs: ev.backend().instructions().to_vec(),
        slots,
        // Rescales left (with double-prime rescaling a level is two chain primes).
        level: boot.levels_left(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Making keys on demand and dropping encoded diagonals changes nothing recorded: the
    /// same instructions, host ids included, as keeping every key and diagonal.
    #[test]
    fn lean_recording_is_the_same_program() {
        let spec = WorkloadSpec::new("bootstrap", "test-boot");
        let full = bootstrap_with(&spec, usize::MAX, true).unwrap();
        // test-boot's keys are small: a limit of 0 takes the on-demand path of large sets.
        let lean = bootstrap_with(&spec, 0, false).unwrap();
        assert_eq!(full.instrs, lean.instrs);
        assert!(full.instrs.iter().any(|i| i.host.is_some()));
    }

    /// Keys and plaintexts as shapes without data record exactly the instructions (ops,
    /// limbs, buffer ids, host ids, kinds) that keys generated and plaintexts encoded for real
    /// record: bootstrapping with each circuit option, and every HE-operation workload.
    #[test]
    fn shape_recording_is_the_recording_of_data() {
        let mut specs = Vec::new();
        for (of_limb, min_ks, hoisting, streamed) in [
            (false, false, true, false),
            (true, true, true, false),
            (false, false, false, true),
        ] {
            let mut s = WorkloadSpec::new("bootstrap", "test-boot");
            (s.of_limb, s.min_ks, s.hoisting) = (of_limb, min_ks, hoisting);
            if streamed {
                s.dataflow = KeySwitchDataflow::Streamed;
            }
            specs.push(s);
        }
        for of_limb in [false, true] {
            let mut s = WorkloadSpec::new("bootstrap", "test-boot");
            (s.of_limb, s.double_hoisting) = (of_limb, true);
            specs.push(s);
        }
        for w in WORKLOADS.iter().filter(|&&w| w != "bootstrap") {
            specs.push(WorkloadSpec::new(w, "test-medium"));
        }
        for spec in &specs {
            let data = record_with_data(spec).unwrap();
            let shapes = record(spec).unwrap();
            assert_eq!(shapes.instrs, data.instrs, "{}", data.label);
            assert_eq!(
                (shapes.label, shapes.slots, shapes.level),
                (data.label, data.slots, data.level)
            );
        }
        // Recording shapes leaves the thread computing again.
        let ctx = crate::setup::context(Parameters::preset("test-small").unwrap()).unwrap();
        assert!(!ctx.is_shape_only());
    }

    /// A recorded bootstrapping written as a trace file and read back is the same stream
    /// (compact instructions keep the file form).
    #[test]
    fn bootstrapping_trace_round_trips() {
        use tessera_backend::trace::{read_trace, write_trace, TraceHeader};
        let w = record(&WorkloadSpec::new("bootstrap", "test-boot")).unwrap();
        let (params, _) = tessera_ckks::params_file::resolve_bootstrap("test-boot").unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let moduli = ctx.ring().moduli().iter().map(|m| m.value()).collect();
        let header = TraceHeader::new(ctx.ring().n(), moduli);
        let mut buf = Vec::new();
        write_trace(&mut buf, &header, &w.instrs).unwrap();
        let (_, back) = read_trace(std::io::BufReader::new(&buf[..])).unwrap();
        assert_eq!(back, w.instrs);
    }
}
