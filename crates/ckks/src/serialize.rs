//! Versioned binary serialisation of ciphertexts, public keys and switching keys.
//!
//! ## Format `TSRA`, version 2 (all integers little-endian)
//!
//! Version 2 added the switching key's plan (version 1 keys assumed the fixed decomposition);
//! version 1 bytes are refused with a clear error.
//! | field | bytes |
//! |---|---|
//! | magic `"TSRA"` | 4 |
//! | format version (2) | 2 |
//! | object type: 1 ciphertext, 2 public key, 3 switching key, 4 secret key | 1 |
//! | reserved (0) | 1 |
//! | ring fingerprint: BLAKE3 of `N` and every modulus | 32 |
//! | payload (per type, below) | ... |
//! | checksum: BLAKE3 of every preceding byte | 32 |
//!
//! A polynomial is `repr (u8: 0 coefficient, 1 evaluation) | limb count (u16) | limb indices
//! (u16 each) | limbs x N words (u64)`. Ciphertext payload: `level (u32) | scale (f64) | slots
//! (u32) | c0 | c1`. Public key: `b | a`. Switching key: its plan, `level (u32) | digit count
//! (u16) | digit count x (start (u16), end (u16)) | special count (u16) | special limb indices
//! (u16 each)`, then one `seed (32 bytes) | b` per digit. Secret key: `s` (every limb, evaluation form). Decoding checks the checksum, the fingerprint (objects only load into the ring they
//! were made for), every length, that limb indices are valid and distinct, that every word is
//! below its modulus, and that levels match limb counts; any failure is a typed error.

use crate::context::CkksContext;
use crate::decomposition::KeySwitchPlan;
use crate::error::{CkksError, Result};
use crate::keys::{Ciphertext, PublicKey, SecretKey, SwitchingKey};
use tessera_math::sampling::Seed;
use tessera_math::{Representation, RnsPoly};

const MAGIC: &[u8; 4] = b"TSRA";
/// Serialisation format version.
pub const FORMAT_VERSION: u16 = 2;
const TYPE_CIPHERTEXT: u8 = 1;
const TYPE_PUBLIC_KEY: u8 = 2;
const TYPE_SWITCHING_KEY: u8 = 3;
const TYPE_SECRET_KEY: u8 = 4;

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
    fn new(ctx: &CkksContext, ty: u8) -> Self {
        let mut v = Vec::new();
        v.extend_from_slice(MAGIC);
        v.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        v.push(ty);
        v.push(0);
        v.extend_from_slice(&fingerprint(ctx));
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
        };
        if bytes.len() < 4 + 2 + 2 + 32 + 32 {
            return Err(r.err(format!(
                "{} bytes is shorter than the smallest object",
                bytes.len()
            )));
        }
        if &bytes[..4] != MAGIC {
            return Err(r.err("not a Tessera object (bad magic)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != FORMAT_VERSION {
            return Err(r.err(format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        if bytes[6] != ty {
            return Err(r.err(format!("object type {} where {ty} was expected", bytes[6])));
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
            pos: 40,
            what,
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
    fn poly(&mut self, ctx: &CkksContext) -> Result<RnsPoly> {
        let repr = match self.u8()? {
            0 => Representation::Coefficient,
            1 => Representation::Evaluation,
            r => return Err(self.err(format!("representation tag {r}"))),
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
    let mut w = Writer::new(ctx, TYPE_CIPHERTEXT);
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
    let chain = ctx.chain_limbs(level.min(ctx.params().max_level()));
    if level > ctx.params().max_level() || c0.limb_indices() != chain || c1.limb_indices() != chain
    {
        return Err(r.err(format!("level {level} does not match the limbs")));
    }
    let scale_ok = scale.is_finite() && scale >= 1.0;
    let slots_ok = slots.is_power_of_two() && slots <= ctx.params().max_slots();
    if !(scale_ok && slots_ok) {
        return Err(r.err(format!("scale {scale} or slots {slots} out of range")));
    }
    Ok(Ciphertext {
        c0,
        c1,
        level,
        scale,
        slots,
    })
}

/// Serialises a public key.
pub fn public_key_to_bytes(pk: &PublicKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_PUBLIC_KEY);
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
    Ok(PublicKey { b, a })
}

/// Serialises a switching key (its plan, `b` halves and seeds).
pub fn switching_key_to_bytes(k: &SwitchingKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_SWITCHING_KEY);
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
        if p.limb_indices() != limbs || p.repr() != Representation::Evaluation {
            return Err(r.err("a key digit spans its plan's limbs in evaluation form"));
        }
        seeds.push(seed);
        b.push(p);
    }
    r.end()?;
    Ok(SwitchingKey { b, seeds, plan })
}

/// Serialises a secret key. The bytes are the secret: store them as such.
pub fn secret_key_to_bytes(sk: &SecretKey, ctx: &CkksContext) -> Vec<u8> {
    let mut w = Writer::new(ctx, TYPE_SECRET_KEY);
    w.poly(sk.poly());
    w.finish()
}

/// Deserialises a secret key made for `ctx`.
pub fn secret_key_from_bytes(bytes: &[u8], ctx: &CkksContext) -> Result<SecretKey> {
    let mut r = Reader::open(bytes, ctx, TYPE_SECRET_KEY, "secret key")?;
    let s = r.poly(ctx)?;
    r.end()?;
    let all: Vec<usize> = (0..ctx.ring().moduli().len()).collect();
    if s.limb_indices() != all || s.repr() != Representation::Evaluation {
        return Err(r.err("a secret key spans every limb in evaluation form"));
    }
    Ok(SecretKey::from_poly(s))
}
