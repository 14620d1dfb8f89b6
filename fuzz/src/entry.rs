//! The entry points the fuzz targets drive, and their seed inputs. The CI replay test
//! (`crates/sim/tests/fuzz_replay.rs`) includes this same file, so the fuzzer and CI exercise
//! exactly the same code. Each entry takes arbitrary bytes and must return, never panic,
//! abort or hang: every parser answers `Ok` or a typed error.

use std::sync::OnceLock;
use tessera_backend::trace::Instr;
use tessera_ckks::params_file::{preset_file_names, preset_text, ParamsFile};
use tessera_ckks::serialize::{
    ciphertext_from_bytes, ciphertext_to_bytes, public_key_from_bytes, public_key_to_bytes,
    secret_key_from_bytes, secret_key_to_bytes, switching_key_from_bytes, switching_key_to_bytes,
};
use tessera_ckks::{CkksContext, KeyGenerator, Parameters};
use tessera_math::sampling::Seed;
use tessera_programs::workloads::{record, WorkloadSpec};
use tessera_sim::arch::Arch;

/// The fuzz targets, by name.
pub const TARGETS: [&str; 4] = [
    "trace_parser",
    "machine_description",
    "ckks_deserialize",
    "params_file",
];

/// The largest ring a parameter-file input is built into a context (and bootstrapping
/// circuit) at: larger rings are parsed and checked, primes and security included, but not
/// built, so one input stays well under the 10 s a hang is.
const MAX_BUILT_LOG_N: u32 = 11;

/// The instruction streams machines are exercised with: HMult at `test-small` (N = 2^10) on
/// vector machines, CtMult at `test-cofhee` (n = 2^6, 128-bit words) on single-PE ones.
fn stream(arch: &Arch) -> &'static [Instr] {
    static VECTOR: OnceLock<Vec<Instr>> = OnceLock::new();
    static PE: OnceLock<Vec<Instr>> = OnceLock::new();
    match arch {
        Arch::Vector(_) => VECTOR.get_or_init(|| ckks_stream("hmult")),
        Arch::Pe(_) => PE.get_or_init(|| {
            tessera_programs::workloads::wide::record_wide("ctmult", "test-cofhee")
                .expect("ctmult records at test-cofhee")
                .instrs
        }),
    }
}

fn ckks_stream(workload: &str) -> Vec<Instr> {
    record(&WorkloadSpec::new(workload, "test-small"))
        .expect("workloads record at test-small")
        .instrs
}

/// A trace file's bytes: read and validated ([`tessera_backend::trace::read_trace`]); a trace
/// that passes is simulated on ARK, which must then not panic either. Whether the input was
/// accepted (the replay test checks that every seed is).
pub fn trace(data: &[u8]) -> bool {
    static ARK: OnceLock<Arch> = OnceLock::new();
    let Ok((_, instrs)) = tessera_backend::trace::read_trace(data) else {
        return false;
    };
    let ark = ARK.get_or_init(|| Arch::load("ark").expect("ark loads"));
    ark.simulate("fuzz", &instrs).is_ok()
}

/// A machine description: TOML (it may `extends` a built-in machine), optionally followed by
/// a line `%%` and one `KEY=VALUE` override per line (`--set`). A description that loads
/// runs a small HMult stream, which must not panic on any machine the checks accept.
/// Whether the description loaded and simulated.
pub fn machine(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let (toml, sets) = text.split_once("\n%%\n").unwrap_or((text, ""));
    let sets: Vec<String> = sets.lines().map(str::to_string).collect();
    let Ok(arch) = Arch::from_toml(toml, "fuzz").and_then(|a| a.with_settings(&sets)) else {
        return false;
    };
    arch.simulate("fuzz", stream(&arch)).is_ok()
}

/// What the CKKS entry deserialises into, and the objects its seeds come from.
struct Ckks {
    ctx: std::sync::Arc<CkksContext>,
    /// One serialised object per type, in the order of [`ckks`]'s selector.
    objects: [Vec<u8>; 4],
}

fn ckks_state() -> &'static Ckks {
    static S: OnceLock<Ckks> = OnceLock::new();
    S.get_or_init(|| {
        let ctx =
            CkksContext::new(Parameters::preset("test-small").expect("preset")).expect("context");
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([7; 32])).expect("key generator");
        let sk = kg.secret_key().expect("secret key");
        let pk = kg.public_key(&sk).expect("public key");
        let rk = kg.relin_key(&sk).expect("relinearisation key");
        let p = ctx.params();
        let pt = ctx
            .encode_real(
                &[0.25, -0.5],
                p.max_slots(),
                p.max_level(),
                p.default_scale(),
            )
            .expect("encode");
        let ct = kg.encrypt_sk(&pt, &sk).expect("encrypt");
        let objects = [
            ciphertext_to_bytes(&ct, &ctx),
            public_key_to_bytes(&pk, &ctx),
            switching_key_to_bytes(&rk, &ctx),
            secret_key_to_bytes(&sk, &ctx),
        ];
        Ckks { ctx, objects }
    })
}

/// Bytes of the fixed prefix (magic, version, type, reserved byte, ring fingerprint) that a
/// framed input borrows from a real object.
const PREFIX: usize = 40;
/// Bytes of the trailing checksum.
const CHECKSUM: usize = 32;

/// `payload` between the prefix of a real object of the selected type and a valid checksum:
/// what lets the fuzzer reach the payload checks behind the checksum and the fingerprint.
fn framed(object: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut v = object[..PREFIX].to_vec();
    v.extend_from_slice(payload);
    let sum = blake3::hash(&v);
    v.extend_from_slice(sum.as_bytes());
    v
}

/// A serialised CKKS object. The first byte selects the deserialiser (bits 0-1: ciphertext,
/// public key, switching key, secret key) and whether the rest is taken as the whole object
/// (bit 2 set) or as a payload framed with a real prefix and a valid checksum (bit 2 clear).
/// Whether the object was accepted.
pub fn ckks(data: &[u8]) -> bool {
    let Some((&sel, rest)) = data.split_first() else {
        return false;
    };
    let s = ckks_state();
    let which = usize::from(sel & 3);
    let bytes = if sel & 4 == 0 {
        framed(&s.objects[which], rest)
    } else {
        rest.to_vec()
    };
    let ctx = &s.ctx;
    match which {
        0 => ciphertext_from_bytes(&bytes, ctx).is_ok(),
        1 => public_key_from_bytes(&bytes, ctx).is_ok(),
        2 => switching_key_from_bytes(&bytes, ctx).is_ok(),
        _ => secret_key_from_bytes(&bytes, ctx).is_ok(),
    }
}

/// A parameter file (`--params FILE`): parsed and checked ([`ParamsFile::parse`]). A file
/// that parses must write back ([`ParamsFile::to_toml`]) to a file that parses to the same
/// set: `tessera params show` prints what a user saves and loads again. Its parameters
/// (primes generated, security checked) at N <= 2^11 then make a context and, with a
/// `[bootstrap]` table, the bootstrapping circuit. Whether the set was accepted (parsed and
/// its parameters checked).
pub fn params(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let Ok(file) = ParamsFile::parse(text, "fuzz") else {
        return false;
    };
    let written = file.to_toml();
    let again = ParamsFile::parse(&written, "fuzz, written back").unwrap_or_else(|e| {
        panic!("a parsed set writes back to a file that fails: {e}\n{written}")
    });
    assert_eq!(again, file, "the set written back differs:\n{written}");
    let Ok(p) = file.parameters() else {
        return false;
    };
    if p.n() <= 1 << MAX_BUILT_LOG_N {
        let Ok(ctx) = CkksContext::new(p) else {
            return false;
        };
        if let Some(bp) = file.bootstrap {
            return tessera_ckks::bootstrap::Bootstrapper::new(&ctx, bp).is_ok();
        }
    }
    true
}

/// Runs `target`'s entry on `data`; whether the input was accepted.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "trace_parser" => trace(data),
        "machine_description" => machine(data),
        "ckks_deserialize" => ckks(data),
        "params_file" => params(data),
        other => panic!("no fuzz target '{other}' (have {TARGETS:?})"),
    }
}

/// Valid inputs of `target` to start from: a recorded trace (HMult at `test-small`, as a
/// file would hold it), every built-in description plus small children that extend them
/// with overrides, and every CKKS object in both framings.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "trace_parser" => {
            let ctx = CkksContext::new(Parameters::preset("test-small").expect("preset"))
                .expect("context");
            let header = serde_json::json!({
                "format": "tessera-trace",
                "version": tessera_backend::trace::TRACE_VERSION,
                "n": ctx.params().n(),
                "moduli": ctx.ring().moduli().iter().map(|m| m.value()).collect::<Vec<_>>(),
            });
            // A key switch (HMult) and a short program (HAdd): short inputs mutate faster.
            ["hmult", "hadd", "hrot"]
                .iter()
                .map(|w| {
                    let mut text = format!("{header}\n");
                    for i in ckks_stream(w) {
                        text += &serde_json::to_string(&i).expect("instructions serialise");
                        text.push('\n');
                    }
                    text.into_bytes()
                })
                .collect()
        }
        "machine_description" => {
            let mut v: Vec<Vec<u8>> = tessera_sim::arch::BUILTIN
                .iter()
                .map(|(_, t)| t.as_bytes().to_vec())
                .collect();
            v.push(b"extends = \"reed\"\nname = \"x\"\n[chip]\nclusters = 8\n".to_vec());
            v.push(
                b"extends = \"cifher\"\n[[component]]\nname = \"I/O dies\"\nremove = true\n%%\nchip.clusters=16\nmemory.noc.mesh_dx=4\n"
                    .to_vec(),
            );
            v.push(b"extends = \"cofhee\"\n%%\npe.pipeline_depth_cycles=30\n".to_vec());
            v.push(b"extends = \"h3\"\n%%\noptions.synchronous_sharing=true\n".to_vec());
            v
        }
        "ckks_deserialize" => {
            let s = ckks_state();
            let mut v = Vec::new();
            for (k, o) in s.objects.iter().enumerate() {
                let mut framed = vec![k as u8];
                framed.extend_from_slice(&o[PREFIX..o.len() - CHECKSUM]);
                v.push(framed);
                let mut whole = vec![k as u8 | 4];
                whole.extend_from_slice(o);
                v.push(whole);
            }
            v
        }
        "params_file" => {
            // The built-in sets, and the example files of docs/parameters.md that are not
            // built in (a model-only boosted set, a dnum = 6 bootstrapping set).
            let examples = [
                include_str!("../../configs/params/boosted-boot-model.toml"),
                include_str!("../../configs/params/reed-boosted-boot-model.toml"),
                include_str!("../../configs/params/example-dnum6-boot.toml"),
            ];
            preset_file_names()
                .into_iter()
                .map(|n| preset_text(n).expect("a built-in file"))
                .chain(examples)
                .map(|t| t.as_bytes().to_vec())
                .collect()
        }
        other => panic!("no fuzz target '{other}' (have {TARGETS:?})"),
    }
}
