//! Versioned binary serialisation of ciphertexts, public keys and switching keys.
//!
//! ## Format `TSRA`, version 3 (all integers little-endian)
//!
//! Version 2 added the switching key's plan (version 1 keys assumed the fixed decomposition);
//! version 3 added the key-set identity ([`crate::KeySetId`]). Older versions are refused with
//! an error that names the version.
//! | field | bytes |
//! |---|---|
//! | magic `"TSRA"` | 4 |
//! | format version (3) | 2 |
//! | object type: 1 ciphertext, 2 public key, 3 switching key, 4 secret key, 5 plaintext | 1 |
//! | reserved (must be 0) | 1 |
//! | ring fingerprint: BLAKE3 of `N` and every modulus | 32 |
//! | key-set identity | 16 |
//! | payload (per type, below) | ... |
//! | checksum: BLAKE3 of every preceding byte | 32 |
//!
//! A polynomial is `repr (u8: 0 coefficient, 1 evaluation) | limb count (u16) | limb indices
//! (u16 each) | limbs x N words (u64)`; every stored polynomial is in evaluation form, and the
//! coefficient tag is refused. Ciphertext payload: `level (u32) | scale (f64) | slots (u32) |
//! c0 | c1`. Plaintext: `level (u32) | scale (f64) | slots (u32) | poly` (its key-set identity
//! is all zeros: a plaintext belongs to no key set). Public key: `b | a`. Switching key: its plan, `level (u32) | digit count (u16) |
//! digit count x (start (u16), end (u16)) | special count (u16) | special limb indices (u16
//! each)`, then one `seed (32 bytes) | b` per digit. Secret key: `s` (every limb).
//!
//! ## What decoding checks
//! The checksum (accidental corruption only: it is unkeyed, so anyone can recompute it), the
//! fingerprint (objects only load into the ring they were made for), the reserved byte, every
//! length, that limb indices are valid and distinct, that every word is below its modulus,
//! that levels match limb counts, that a scale lies in `[1, Q_level)` and a slot count is a
//! power of two up to N/2, that a switching key's plan passes [`KeySwitchPlan::validate`]
//! (modulus budget, P covering every digit), and that a secret key is a non-zero ternary
//! polynomial, the same on every limb, whose key-set identity is the one its coefficients
//! give. Any failure is a typed error. Operations on deserialised objects then refuse to mix
//! key sets. What it cannot see: an edit, by someone who recomputes the checksum, that leaves
//! every field within its range (a scale changed to another admissible value, another slot
//! count, other ciphertext words): nothing short of a signature from the key owner detects
//! that (docs/security.md).

use crate::context::{CkksContext, Plaintext};
use crate::decomposition::KeySwitchPlan;
use crate::error::{CkksError, Result};
use crate::keys::{key_set_id, Ciphertext, KeySetId, PublicKey, SecretKey, SwitchingKey};
use tessera_math::sampling::Seed;
use tessera_math::{Representation, RnsPoly};

const MAGIC: &[u8; 4] = b"TSRA";
/// Serialisation format version.
pub const FORMAT_VERSION: u16 = 3;
/// Bytes before the payload: magic, version, type, reserved, fingerprint, key-set identity.
const HEADER: usize = 4 + 2 + 1 + 1 + 32 + 16;
const TYPE_CIPHERTEXT: u8 = 1;
const TYPE_PUBLIC_KEY: u8 = 2;
const TYPE_SWITCHING_KEY: u8 = 3;
const TYPE_SECRET_KEY: u8 = 4;
const TYPE_PLAINTEXT: u8 = 5;

fn fingerprint(ctx: &CkksContext) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("tessera 2026 ring fingerprint");
    h.update(&(ctx.params().n() as u64).to_le_bytes());
    for m in ctx.ring().moduli() {
        h.update(&m.value().to_le_bytes());
    }
    *h.finalize().as_bytes()
}

struct Writer(Vec<u8>);

impl Writer {
    fn new(ctx: &CkksContext, ty: u8, id: KeySetId) -> Self {
        let mut v = Vec::new();
        v.extend_from_slice(MAGIC);
        v.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        v.push(ty);
        v.push(0);
        v.extend_from_slice(&fingerprint(ctx));
        v.extend_from_slice(&id.0);
        Self(v)
    }
    fn u16(&mut self, x: u16) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn poly(&mut self, p: &RnsPoly) {
        self.0.push(match p.repr() {
            Representation::Coefficient => 0,
            Representation::Evaluation => 1,
        });
        self.u16(p.num_limbs() as u16);
        for &i in p.limb_indices() {
            self.u16(i as u16);
        }
        self.0.reserve(8 * p.data().len());
        for &w in p.data() {
            self.0.extend_from_slice(&w.to_le_bytes());
        }
    }
    fn finish(mut self) -> Vec<u8> {
        let sum = blake3::hash(&self.0);
        self.0.extend_from_slice(sum.as_bytes());
        self.0
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
    /// The key-set identity of the header.
    id: KeySetId,
}

impl<'a> Reader<'a> {
    fn err(&self, reason: impl Into<String>) -> CkksError {
        CkksError::Deserialize {
            what: self.what,
            reason: reason.into(),
        }
    }

    /// Checks magic, version, type, checksum and fingerprint; returns a reader over the payload.
    fn open(bytes: &'a [u8], ctx: &CkksContext, ty: u8, what: &'static str) -> Result<Self> {
        let r = Reader {
            bytes,
            pos: 0,
            what,
            id: KeySetId([0; 16]),
        };
        if bytes.len() < HEADER + 32 {
            return Err(r.err(format!(
                "{} bytes is shorter than the smallest object",
                bytes.len()
            )));
        }
        if &bytes[..4] != MAGIC {
            return Err(r.err("not a Tessera object (bad magic)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version < FORMAT_VERSION {
            return Err(r.err(format!(
                "format version {version} is no longer read (this build reads version {FORMAT_VERSION}, which adds the key-set identity): make the object again with this build"
            )));
        }
        if version != FORMAT_VERSION {
            return Err(r.err(format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        if bytes[6] != ty {
            return Err(r.err(format!("object type {} where {ty} was expected", bytes[6])));
        }
        if bytes[7] != 0 {
            return Err(r.err(format!("reserved byte is {} (must be 0)", bytes[7])));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if blake3::hash(body).as_bytes() != sum {
            return Err(r.err("checksum mismatch: the bytes are corrupted"));
        }
        if body[8..40] != fingerprint(ctx) {
            return Err(r.err("made for other parameters (ring fingerprint differs)"));
        }
        Ok(Reader {
            bytes: body,
            pos: HEADER,
            what,
            id: KeySetId(body[40..HEADER].try_into().expect("16 bytes")),
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.pos < n {
            return Err(self.err(format!("truncated at byte {} (needs {n} more)", self.pos)));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// A polynomial; every object stores them in evaluation form.
    fn poly(&mut self, ctx: &CkksContext) -> Result<RnsPoly> {
        let repr = match self.u8()? {
            1 => Representation::Evaluation,
            r => {
                return Err(self.err(format!(
                    "representation tag {r} (stored polynomials are in evaluation form, tag 1)"
                )))
            }
        };
        let count = self.u16()? as usize;
        let total = ctx.ring().moduli().len();
        if count == 0 || count > total {
            return Err(self.err(format!("{count} limbs (the ring has {total})")));
        }
        let limbs = (0..count)
            .map(|_| Ok(self.u16()? as usize))
            .collect::<Result<Vec<_>>>()?;
        let n = ctx.params().n();
        let raw = self.take(8 * n * count)?;
        let data: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        RnsPoly::from_data(ctx.ring(), &limbs, data, repr).map_err(|e| self.err(e.to_string()))
    }
    fn end(&self) -> Result<()> {
        if self.pos != self.bytes.len() {
            return Err(self.err(format!("{} trailing bytes", self.bytes.len() - self.pos)));
        }
        Ok(())
    }
}

/// Serialises a ciphertext.
pub fn ciphertext_to_bytes(ct: &Ciphertext<RnsPoly>, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_CIPHERTEXT, ct.key_set);
    w.u32(ct.level as u32);
    w.0.extend_from_slice(&ct.scale.to_le_bytes());
    w.u32(ct.slots as u32);
    w.poly(&ct.c0);
    w.poly(&ct.c1);
    w.finish()
}

/// Deserialises a ciphertext made for `ctx`.
pub fn ciphertext_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<Ciphertext<RnsPoly>> {
    let mut r = Reader::open(bytes, ctx, TYPE_CIPHERTEXT, "ciphertext")?;
    let level = r.u32()? as usize;
    let scale = r.f64()?;
    let slots = r.u32()? as usize;
    let (c0, c1) = (r.poly(ctx)?, r.poly(ctx)?);
    r.end()?;
    check_message(&r, ctx, level, scale, slots, &[&c0, &c1])?;
    Ok(Ciphertext {
        c0,
        c1,
        level,
        scale,
        slots,
        key_set: r.id,
    })
}

/// Checks what a ciphertext's or plaintext's header says against its polynomials and `ctx`:
/// the level matches the limbs, the scale leaves room for a message, the slot count is a power
/// of two up to N/2.
fn check_message(
    r: &Reader<'_>,
    ctx: &CkksContext,
    level: usize,
    scale: f64,
    slots: usize,
    polys: &[&RnsPoly],
) -> Result<()> {
    let chain = ctx.chain_limbs(level.min(ctx.params().max_level()));
    if level > ctx.params().max_level() || polys.iter().any(|p| p.limb_indices() != chain) {
        return Err(r.err(format!("level {level} does not match the limbs")));
    }
    // A scale at or above the level's modulus leaves no room for a message.
    let log_q: f64 = ctx.params().q()[..=level]
        .iter()
        .map(|&q| (q as f64).log2())
        .sum();
    if !(scale.is_finite() && scale >= 1.0 && scale.log2() < log_q) {
        return Err(r.err(format!(
            "scale {scale} out of range: 1 to below Q_{level} = 2^{log_q:.1}"
        )));
    }
    if !(slots.is_power_of_two() && slots <= ctx.params().max_slots()) {
        return Err(r.err(format!(
            "slots {slots} out of range: a power of two up to N/2 = {}",
            ctx.params().max_slots()
        )));
    }
    Ok(())
}

/// Serialises a plaintext (format v3, type 5).
///
/// ```
/// use tessera_ckks::serialize::{plaintext_from_bytes, plaintext_to_bytes};
/// use tessera_ckks::{CkksContext, Parameters};
/// let ctx = CkksContext::new(Parameters::preset("test-small")?)?;
/// let pt = ctx.encode(&[num_complex::Complex64::new(0.5, 0.0)], 1, 1, ctx.params().default_scale())?;
/// let back = plaintext_from_bytes(&plaintext_to_bytes(&pt, &ctx), &ctx)?;
/// assert_eq!((back.level, back.slots), (1, 1));
/// assert_eq!(back.poly.data(), pt.poly.data());
/// # Ok::<(), tessera_ckks::CkksError>(())
/// ```
pub fn plaintext_to_bytes(pt: &Plaintext, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_PLAINTEXT, KeySetId([0; 16]));
    w.u32(pt.level as u32);
    w.0.extend_from_slice(&pt.scale.to_le_bytes());
    w.u32(pt.slots as u32);
    w.poly(&pt.poly);
    w.finish()
}

/// Deserialises a plaintext made for `ctx`.
pub fn plaintext_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<Plaintext> {
    let mut r = Reader::open(bytes, ctx, TYPE_PLAINTEXT, "plaintext")?;
    let level = r.u32()? as usize;
    let scale = r.f64()?;
    let slots = r.u32()? as usize;
    let poly = r.poly(ctx)?;
    r.end()?;
    check_message(&r, ctx, level, scale, slots, &[&poly])?;
    Ok(Plaintext {
        shape: None,
        poly,
        level,
        scale,
        slots,
    })
}

/// Serialises a public key.
pub fn public_key_to_bytes(pk: &PublicKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_PUBLIC_KEY, pk.key_set());
    w.poly(&pk.b);
    w.poly(&pk.a);
    w.finish()
}

/// Deserialises a public key made for `ctx`.
pub fn public_key_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<PublicKey> {
    let mut r = Reader::open(bytes, ctx, TYPE_PUBLIC_KEY, "public key")?;
    let (b, a) = (r.poly(ctx)?, r.poly(ctx)?);
    r.end()?;
    let chain = ctx.chain_limbs(ctx.params().max_level());
    if b.limb_indices() != chain || a.limb_indices() != chain {
        return Err(r.err("a public key spans the whole chain"));
    }
    Ok(PublicKey { b, a, id: r.id })
}

/// Serialises a switching key (its plan, `b` halves and seeds).
pub fn switching_key_to_bytes(k: &SwitchingKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_SWITCHING_KEY, k.key_set());
    let plan = k.plan();
    w.u32(plan.level as u32);
    w.u16(plan.digits.len() as u16);
    for d in &plan.digits {
        w.u16(d.start as u16);
        w.u16(d.end as u16);
    }
    w.u16(plan.special.len() as u16);
    for &i in &plan.special {
        w.u16(i as u16);
    }
    for i in 0..k.dnum() {
        w.0.extend_from_slice(&k.seed(i).0);
        w.poly(k.b(i));
    }
    w.finish()
}

/// Deserialises a switching key made for `ctx`.
pub fn switching_key_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<SwitchingKey> {
    let mut r = Reader::open(bytes, ctx, TYPE_SWITCHING_KEY, "switching key")?;
    let level = r.u32()? as usize;
    let count = r.u16()? as usize;
    let mut digits = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let (start, end) = (r.u16()? as usize, r.u16()? as usize);
        digits.push(start..end);
    }
    let specials = r.u16()? as usize;
    let special = (0..specials)
        .map(|_| r.u16().map(usize::from))
        .collect::<Result<Vec<_>>>()?;
    let plan = KeySwitchPlan {
        level,
        digits,
        special,
    };
    plan.validate(ctx.params())
        .map_err(|e| r.err(format!("invalid key-switching plan: {e}")))?;
    let limbs = plan.qp_limbs(plan.level);
    let (mut b, mut seeds) = (Vec::new(), Vec::new());
    for _ in 0..plan.digits.len() {
        let seed = Seed(r.take(32)?.try_into().expect("32 bytes"));
        let p = r.poly(ctx)?;
        if p.limb_indices() != limbs {
            return Err(r.err("a key digit spans its plan's limbs"));
        }
        seeds.push(seed);
        b.push(p);
    }
    r.end()?;
    Ok(SwitchingKey {
        b,
        seeds: crate::keys::KeySeeds::new(seeds),
        plan,
        id: r.id,
        shapes: None,
    })
}

/// Serialises a secret key. The bytes are the secret: store them as such.
pub fn secret_key_to_bytes(sk: &SecretKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_SECRET_KEY, sk.key_set());
    w.poly(sk.poly());
    w.finish()
}

/// Deserialises a secret key made for `ctx`.
pub fn secret_key_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<SecretKey> {
    let mut r = Reader::open(bytes, ctx, TYPE_SECRET_KEY, "secret key")?;
    let s = r.poly(ctx)?;
    r.end()?;
    let all: Vec<usize> = (0..ctx.ring().moduli().len()).collect();
    if s.limb_indices() != all {
        return Err(r.err("a secret key spans every limb"));
    }
    let coeffs = ternary_coefficients(&s).map_err(|e| r.err(e))?;
    if coeffs.iter().all(|&c| c == 0) {
        return Err(r.err("the secret key is zero"));
    }
    if key_set_id(&coeffs) != r.id {
        return Err(
            r.err("its key-set identity is not the one its coefficients give (edited header)")
        );
    }
    Ok(SecretKey::from_poly(s, r.id))
}

/// The coefficients of a secret polynomial (evaluation form) if they are ternary and the same
/// on every limb; otherwise why not.
fn ternary_coefficients(s: &RnsPoly) -> std::result::Result<Vec<i64>, String> {
    let mut c = s.clone();
    c.intt().map_err(|e| e.to_string())?;
    let moduli = c.moduli();
    let mut out: Vec<i64> = Vec::new();
    for (k, &q) in moduli.iter().enumerate() {
        for (i, &w) in c.limb(k).iter().enumerate() {
            let v = match w {
                0 => 0,
                1 => 1,
                w if w == q - 1 => -1,
                _ => {
                    return Err(format!(
                        "coefficient {i} on limb {k} is not in {{-1, 0, 1}}"
                    ))
                }
            };
            if k == 0 {
                out.push(v);
            } else if out[i] != v {
                return Err(format!("coefficient {i} differs between limbs 0 and {k}"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Parameters;

    /// A key for `plan` with zero `b` halves: bytes a hostile writer could produce.
    fn key_bytes(ctx: &CkksContext, plan: KeySwitchPlan) -> Vec<u8> {
        let limbs = plan.qp_limbs(plan.level);
        let b = RnsPoly::zero(ctx.ring(), &limbs, Representation::Evaluation).unwrap();
        let k = SwitchingKey {
            b: vec![b; plan.digits.len()],
            seeds: crate::keys::KeySeeds::new(vec![Seed([1; 32]); plan.digits.len()]),
            plan,
            id: KeySetId([7; 16]),
            shapes: None,
        };
        switching_key_to_bytes(&k, ctx)
    }

    /// Issue 24 item 2: keys over the modulus budget, or whose P does not cover a digit, are
    /// refused when read (a too-small P gives garbage without error otherwise).
    #[test]
    fn keys_over_budget_or_short_of_p_are_refused() {
        let ctx = CkksContext::new(Parameters::preset("test-medium").unwrap()).unwrap();
        let params = ctx.params();
        let fixed = KeySwitchPlan::fixed(params);
        assert!(switching_key_from_bytes(&key_bytes(&ctx, fixed.clone()), &ctx).is_ok());
        let first = params.q().len();
        let over = KeySwitchPlan {
            special: (first..first + params.p().len() + params.p_extra().len()).collect(),
            ..fixed.clone()
        };
        let e = switching_key_from_bytes(&key_bytes(&ctx, over), &ctx)
            .unwrap_err()
            .to_string();
        assert!(e.contains("budget"), "{e}");
        let short = KeySwitchPlan {
            special: vec![first],
            ..fixed
        };
        let e = switching_key_from_bytes(&key_bytes(&ctx, short), &ctx)
            .unwrap_err()
            .to_string();
        assert!(e.contains("log2 P"), "{e}");
    }

    /// Plaintexts round-trip; another type, a level that does not match the limbs, and an
    /// edited slot count are refused.
    #[test]
    fn plaintexts_round_trip_and_bad_headers_are_refused() {
        use num_complex::Complex64;
        let ctx = CkksContext::new(Parameters::preset("test-small").unwrap()).unwrap();
        let vals: Vec<Complex64> = (0..8)
            .map(|i| Complex64::new(i as f64 / 8.0, 0.5))
            .collect();
        let pt = ctx
            .encode(&vals, 8, 2, ctx.params().default_scale())
            .unwrap();
        let bytes = plaintext_to_bytes(&pt, &ctx);
        let back = plaintext_from_bytes(&bytes, &ctx).unwrap();
        assert_eq!(back.poly.data(), pt.poly.data());
        assert_eq!((back.level, back.scale, back.slots), (2, pt.scale, 8));
        // Rewrites one header field and recomputes the checksum, as a careless writer would.
        let edit = |at: usize, with: &[u8]| {
            let mut b = bytes[..bytes.len() - 32].to_vec();
            b[at..at + with.len()].copy_from_slice(with);
            let sum = blake3::hash(&b);
            b.extend_from_slice(sum.as_bytes());
            plaintext_from_bytes(&b, &ctx).unwrap_err().to_string()
        };
        assert!(edit(6, &[TYPE_CIPHERTEXT]).contains("object type"));
        assert!(edit(HEADER, &1u32.to_le_bytes()).contains("does not match the limbs"));
        assert!(edit(HEADER + 12, &3u32.to_le_bytes()).contains("slots 3"));
    }
}
