//! What is simulated is what is computed: one program, run on the CPU backend (recorded) and
//! on the trace backend, yields the identical instruction stream.

use std::sync::Arc;
use tessera_backend::trace::{Instr, Op};
use tessera_backend::{Backend, CpuBackend, Recording, TraceBackend};
use tessera_ckks::*;
use tessera_math::sampling::Seed;
use tessera_math::RnsPoly;

/// HMult + rescale, HRot at two levels, hoisted rotations, conjugation, PMult, HAdd: returns
/// the final ciphertext.
fn program<B: Backend>(
    ev: &mut Evaluator<B>,
    ct: &Ciphertext<RnsPoly>,
    pt: &Plaintext,
    keys: &EvaluationKeys,
) -> Ciphertext<B::Poly> {
    let x = ev.load(ct).unwrap();
    let sq = ev.mul_relin(&x, &x, keys).unwrap();
    let sq = ev.rescale(&sq).unwrap();
    let r = ev.rotate(&sq, 1, keys).unwrap();
    let r2 = ev.rotate(&x, -2, keys).unwrap();
    let hoisted = ev.rotate_hoisted(&x, &[1, -2], keys).unwrap();
    let r2 = ev.add(&r2, &hoisted[1]).unwrap();
    let c = ev.conjugate(&r2, keys).unwrap();
    let p = ev.mul_plain(&c, pt).unwrap();
    let p = ev.rescale(&p).unwrap();
    let p = Ciphertext {
        scale: r.scale,
        ..p
    };
    ev.add(&r, &p).unwrap()
}

fn setup() -> (
    Arc<CkksContext>,
    Ciphertext<RnsPoly>,
    Plaintext,
    EvaluationKeys,
    SecretKey,
) {
    let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, &Seed([21; 32])).unwrap();
    let sk = kg.secret_key().unwrap();
    let keys = kg.evaluation_keys(&sk, &[1, -2], true).unwrap();
    let l = ctx.params().max_level();
    let pt = ctx
        .encode_real(&[0.5, 0.25], 8, l, ctx.params().default_scale())
        .unwrap();
    let ct = kg.encrypt_sk(&pt, &sk).unwrap();
    (ctx, ct, pt, keys, sk)
}

#[test]
fn cpu_and_trace_backends_see_the_same_primary_functions() {
    let (ctx, ct, pt, keys, sk) = setup();
    let mut cpu =
        Evaluator::new(&ctx, Recording::new(CpuBackend::new(ctx.ring().clone()))).unwrap();
    let out = program(&mut cpu, &ct, &pt, &keys);
    let mut tr = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
    let traced = program(&mut tr, &ct, &pt, &keys);
    let (a, b): (&[Instr], &[Instr]) = (cpu.backend().instructions(), tr.backend().instructions());
    assert!(a.len() > 100, "a real program: {} instructions", a.len());
    assert_eq!(a, b);
    // Every HE operation is bracketed, and the key-switching primaries appear.
    let begins = a.iter().filter(|i| i.op == Op::Begin).count();
    assert_eq!(begins, a.iter().filter(|i| i.op == Op::End).count());
    for op in [
        Op::Bconv,
        Op::ExpandSeed,
        Op::Automorphism,
        Op::MulAcc,
        Op::Ntt,
        Op::Intt,
    ] {
        assert!(a.iter().any(|i| i.op == op), "{op:?} missing");
    }
    // The recorded CPU run still computes: the result decrypts (the trace stores nothing).
    let host = cpu.store(&out).unwrap();
    assert!(tessera_ckks::decrypt(&host, &sk).is_ok());
    let err = tr.store(&traced).unwrap_err().to_string();
    assert!(err.contains("not supported"), "{err}");
}

#[test]
fn streamed_trace_is_json_lines_with_a_header() {
    let (ctx, ct, pt, keys, _) = setup();
    let path = std::env::temp_dir().join(format!("tessera-trace-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let backend = Recording::streaming(
        tessera_backend::MetaBackend::new(ctx.ring().clone()),
        Box::new(std::io::BufWriter::new(file)),
    )
    .unwrap();
    let mut ev = Evaluator::new(&ctx, backend).unwrap();
    program(&mut ev, &ct, &pt, &keys);
    ev.backend_mut().recorder().flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["format"], "tessera-trace");
    assert_eq!(header["version"], 2);
    assert_eq!(header["n"], 4096);
    let instrs: Vec<Instr> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(instrs.len() > 100);
    let (h, again) = tessera_backend::trace::read_trace(text.as_bytes()).unwrap();
    assert_eq!((h.n, &again), (4096, &instrs));
    assert!(tessera_backend::trace::read_trace(&b"{\"format\":\"x\"}"[..]).is_err());
    assert!(instrs.windows(2).all(|w| w[1].seq == w[0].seq + 1));
}

#[test]
fn trace_backend_rejects_what_the_cpu_rejects() {
    let (ctx, ct, _, _, _) = setup();
    let mut tr = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
    let x = tr.load(&ct).unwrap();
    let low = tr.drop_levels(&x, 1).unwrap();
    assert!(matches!(
        tr.add(&x, &low),
        Err(CkksError::LevelMismatch { .. })
    ));
    // Primary-level checks: limb sets must match.
    let b = tr.backend_mut();
    assert!(b.add(&x.c0, &low.c0).is_err());
    let mut c = x.c0.clone();
    assert!(b.ntt(&mut c).is_err(), "already in evaluation form");
}

/// The work in a traced key switch equals the closed forms of `tessera_ckks::costs`, at every
/// level and for several dnum.
#[test]
fn key_switch_trace_matches_closed_forms() {
    use tessera_backend::trace::TraceCounts;
    use tessera_ckks::costs::key_switch_cost;
    for dnum in [1usize, 2, 3, 4, 9] {
        let lit = ParametersLiteral {
            name: format!("test-costs-{dnum}"),
            dnum,
            log_p: vec![60; 9usize.div_ceil(dnum) + 1],
            ..tessera_ckks::params::preset_literal("test-medium").unwrap()
        };
        let ctx = CkksContext::new(Parameters::new(lit).unwrap()).unwrap();
        let mut kg = KeyGenerator::from_seed(&ctx, &Seed([1; 32])).unwrap();
        let sk = kg.secret_key().unwrap();
        let rlk = kg.relin_key(&sk).unwrap();
        let pt = ctx
            .encode_real(&[1.0], 1, ctx.params().max_level(), 1e9)
            .unwrap();
        let ct = kg.encrypt_sk(&pt, &sk).unwrap();
        for level in 0..=ctx.params().max_level() {
            let mut tr = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
            let x = tr.load(&ct).unwrap();
            let x = tr
                .drop_levels(&x, ctx.params().max_level() - level)
                .unwrap();
            let start = tr.backend().instructions().len();
            tr.key_switch(&x.c1, level, &rlk).unwrap();
            let got = TraceCounts::from_instructions(&tr.backend().instructions()[start..]);
            let want = key_switch_cost(ctx.params(), level);
            assert_eq!(got, want, "dnum {dnum}, level {level}");
        }
    }
}

/// OF-Limb: the same product as a full plaintext, with one plaintext limb loaded instead of
/// `level + 1`, and the extension visible in the trace.
#[test]
fn of_limb_plaintexts_match_full_plaintexts_and_load_one_limb() {
    let (ctx, ct, _, _, sk) = setup();
    let l = ctx.params().max_level();
    let vals: Vec<num_complex::Complex64> = (0..8)
        .map(|k| num_complex::Complex64::new(k as f64 / 8.0 - 0.5, 0.25))
        .collect();
    let full = ctx
        .encode(&vals, 8, l, ctx.params().default_scale())
        .unwrap();
    let of = ctx
        .encode_oflimb(&vals, 8, l, ctx.params().default_scale())
        .unwrap();
    let mut cpu =
        Evaluator::new(&ctx, Recording::new(CpuBackend::new(ctx.ring().clone()))).unwrap();
    let x = cpu.load(&ct).unwrap();
    let a = cpu.mul_plain(&x, &full).unwrap();
    let start = cpu.backend().instructions().len();
    let b = cpu.mul_plain_oflimb(&x, &of).unwrap();
    let of_instrs = &cpu.backend().instructions()[start..];
    let plaintext_limbs: usize = of_instrs
        .iter()
        .filter(|i| i.op == Op::Load && i.kind == Some(tessera_backend::Kind::Plaintext))
        .map(|i| i.limbs.len())
        .sum();
    assert_eq!(plaintext_limbs, 1);
    assert!(of_instrs.iter().any(|i| i.op == Op::ExtendLimb));
    let (ha, hb) = (cpu.store(&a).unwrap(), cpu.store(&b).unwrap());
    // The encodings are identical integers, so the products are identical.
    assert_eq!(ha.c0, hb.c0);
    assert_eq!(ha.c1, hb.c1);
    let _ = decrypt(&hb, &sk).unwrap();
    // A coefficient that does not fit q_0 / 2 is refused.
    assert!(ctx.encode_oflimb(&vals, 8, l, 2f64.powi(80)).is_err());
}

/// `load` records name the host object: the relinearisation key loaded at two levels carries
/// one id, and the rotation keys, the ciphertext and the plaintext carry others.
#[test]
fn loads_name_their_host_object_across_levels() {
    let (ctx, ct, pt, keys, _) = setup();
    let mut tr = Evaluator::new(&ctx, TraceBackend::trace(ctx.ring().clone())).unwrap();
    let x = tr.load(&ct).unwrap();
    let y = tr.mul_relin(&x, &x, &keys).unwrap();
    let y = tr.rescale(&y).unwrap();
    let _ = tr.mul_relin(&y, &y, &keys).unwrap();
    let _ = tr.rotate(&x, 1, &keys).unwrap();
    let _ = tr.mul_plain(&x, &pt).unwrap();
    // Key loads per HMult (between its begin and end markers).
    let mut per_op: Vec<Vec<(u64, usize)>> = Vec::new();
    let mut inside = false;
    for i in tr.backend().instructions() {
        match i.op {
            Op::Begin => {
                inside = i.name.as_deref() == Some("HMult");
                if inside {
                    per_op.push(Vec::new());
                }
            }
            Op::Load if inside && i.kind == Some(tessera_backend::Kind::EvalKey) => per_op
                .last_mut()
                .unwrap()
                .push((i.host.unwrap(), i.limbs.len())),
            _ => {}
        }
    }
    assert_eq!(per_op.len(), 2);
    // Digit k of the relinearisation key at the top level and one level down: same host,
    // one limb fewer.
    assert!(!per_op[1].is_empty());
    for (k, (top, below)) in per_op[0].iter().zip(&per_op[1]).enumerate() {
        assert_eq!(top.0, below.0, "digit {k}");
        assert_eq!(top.1, below.1 + 1, "digit {k}");
    }
    let dnum = per_op[0].len();
    let all: Vec<u64> = tr
        .backend()
        .instructions()
        .iter()
        .filter(|i| i.op == Op::Load)
        .map(|i| i.host.expect("loads carry a host id"))
        .collect();
    let distinct: std::collections::BTreeSet<u64> = all.iter().copied().collect();
    // ciphertext (2 polys) + relin digits + rotation digits + plaintext
    assert!(distinct.len() > 2 + 2 * dnum.min(2), "{distinct:?}");
    assert!(tr
        .backend()
        .instructions()
        .iter()
        .filter(|i| i.op != Op::Load && i.op != Op::ExpandSeed)
        .all(|i| i.host.is_none()));
}

/// The CPU backend's fused primaries (ModUp's in-place extended digit, ModDown's one-pass
/// difference and product) give the ciphertexts that their unfused compositions give, bit for
/// bit: the same program, then HMult with the fused rescale, on the bare CPU backend and on
/// the recording wrapper (which runs the trait's default compositions on the CPU backend's
/// separate primaries), with both key-switch dataflows.
#[test]
fn fused_cpu_primaries_equal_their_compositions() {
    let (ctx, ct, pt, keys, _) = setup();
    fn run<B: Backend>(
        ev: &mut Evaluator<B>,
        ct: &Ciphertext<RnsPoly>,
        pt: &Plaintext,
        keys: &EvaluationKeys,
    ) -> Ciphertext<RnsPoly> {
        let out = program(ev, ct, pt, keys);
        let m = ev.mul_relin_rescale(&out, &out, keys).unwrap();
        ev.store(&m).unwrap()
    }
    for flow in [KeySwitchDataflow::Batched, KeySwitchDataflow::Streamed] {
        let mut bare = Evaluator::new(&ctx, CpuBackend::new(ctx.ring().clone())).unwrap();
        bare.set_key_switch_dataflow(flow);
        let mut rec =
            Evaluator::new(&ctx, Recording::new(CpuBackend::new(ctx.ring().clone()))).unwrap();
        rec.set_key_switch_dataflow(flow);
        let (fused, composed) = (
            run(&mut bare, &ct, &pt, &keys),
            run(&mut rec, &ct, &pt, &keys),
        );
        let ops = |op| {
            rec.backend()
                .instructions()
                .iter()
                .filter(|i| i.op == op)
                .count()
        };
        assert!(
            ops(Op::Concat) > 0 && ops(Op::Sub) > 0,
            "{flow:?}: the compositions ran"
        );
        assert_eq!(fused.c0, composed.c0, "{flow:?}");
        assert_eq!(fused.c1, composed.c1, "{flow:?}");
    }
}
