//! [`DeviceRing`]: a ring's constants resident on one device (moduli with Barrett constants,
//! NTT twiddles with Shoup quotients, N^-1), and the device-side caches: limb maps,
//! automorphism permutations, BConv tables, and the host-object cache that uploads keys and
//! plaintexts once.

use crate::device::{Buffer, Device};
use crate::error::Result;
use crate::poly::DevicePoly;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tessera_math::ntt::bit_reverse;
use tessera_math::{Modulus, Representation, RingContext, RnsPoly};

/// Barrett constants of `mul_mod` in `kernels/modarith.cuh`: `(q, floor(2^(2k) / q), k)` with
/// `k = bits(q)`.
pub(crate) fn barrett(m: &Modulus) -> [u64; 3] {
    let k = m.bits() as u64;
    let mu = (1u128 << (2 * k)) / m.value() as u128;
    [m.value(), mu as u64, k]
}

/// The twiddle table of the radix-2 kernels for `psi` (`w[k] = psi^brev(k)`) and its Shoup
/// quotients for the word size ([`shoup_for`]): the layout of the math crate's tables.
pub(crate) fn twiddles(m: &Modulus, n: usize, psi: u64, w32: bool) -> (Vec<u64>, Vec<u64>) {
    let bits = n.trailing_zeros();
    let mut pow = vec![1u64; n];
    for k in 1..n {
        pow[k] = m.mul(pow[k - 1], psi);
    }
    let w: Vec<u64> = (0..n).map(|k| pow[bit_reverse(k, bits)]).collect();
    let ws = w.iter().map(|&x| shoup_for(m, x, w32)).collect();
    (w, ws)
}

/// The Shoup quotient of `x` (below `m`) for the word size: `floor(x * 2^32 / q)` for 32-bit
/// words (`w32`), else `floor(x * 2^64 / q)` ([`Modulus::shoup`]).
pub(crate) fn shoup_for(m: &Modulus, x: u64, w32: bool) -> u64 {
    if w32 {
        (x << 32) / m.value()
    } else {
        m.shoup(x)
    }
}

/// Whether every prime of `ring` is below 2^30, the 32-bit word range of the kernels (the
/// lazy NTT keeps values below `4q`) and of the math crate's 32-bit backend.
pub fn fits_32_bit_words(ring: &RingContext) -> bool {
    tessera_math::word32::prime_too_large(ring).is_none()
}

/// Residues (each below 2^32) packed two to a 64-bit word, the first in the low half: the
/// device's layout of a `u32` array, uploaded through the 64-bit word interface. `data` has
/// an even length (limbs of `N >= 2` words).
pub(crate) fn pack_u32(data: &[u64]) -> Vec<u64> {
    debug_assert!(data.len().is_multiple_of(2) && data.iter().all(|&x| x >> 32 == 0));
    data.chunks_exact(2).map(|p| p[0] | (p[1] << 32)).collect()
}

/// The inverse of [`pack_u32`].
pub(crate) fn unpack_u32(words: &[u64]) -> Vec<u64> {
    words
        .iter()
        .flat_map(|&w| [w & 0xffff_ffff, w >> 32])
        .collect()
}

/// The BConv constants of one (from, to) pair, on the device.
pub(crate) struct ConvTables {
    pub inv: Buffer,
    pub inv_shoup: Buffer,
    pub qhat: Buffer,
    pub qhat_shoup: Buffer,
    pub qinv: Buffer,
    pub vq: Buffer,
}

/// What finds a cached host object's candidates: its limb set, representation and a hash of
/// a few sampled words. A candidate is a hit only if its data equals the object's (same
/// buffer, or equal words): the evaluator passes each key switch a fresh host selection of
/// the key's limbs, so the same key arrives at a new address every time.
pub(crate) type HostKey = (Vec<usize>, Representation, u64);

/// A seeded key half's expansion: the seed and the limbs it was expanded over.
pub(crate) type SeedKey = ([u8; 32], Vec<usize>);

/// An entry of the cache, in eviction order.
#[derive(Clone)]
pub(crate) enum CacheKey {
    Host(HostKey),
    Seed(SeedKey),
}

/// Keys and plaintexts uploaded once, and the seeded key halves expanded once: a host entry
/// holds a clone of the host polynomial (whose buffer is shared copy-on-write, so it stays
/// unchanged while cached) and its device copy; a seed entry the expansion over its limbs
/// (deterministic in the seed and the moduli, so a hit is exact).
#[derive(Default)]
pub(crate) struct HostCache {
    pub map: HashMap<HostKey, Vec<(RnsPoly, DevicePoly)>>,
    pub seeds: HashMap<SeedKey, DevicePoly>,
    pub order: VecDeque<CacheKey>,
    pub bytes: u64,
    pub hits: u64,
    pub misses: u64,
}

impl HostCache {
    /// Evicts the oldest entries until `extra` more bytes fit under `limit`; false if they
    /// cannot (the object is larger than the whole cache).
    pub fn make_room(&mut self, extra: u64, limit: u64) -> bool {
        while self.bytes + extra > limit {
            let Some(old) = self.order.pop_front() else {
                return false;
            };
            let freed = match old {
                CacheKey::Host(k) => {
                    let (freed, empty) = match self.map.get_mut(&k) {
                        Some(v) => (Some(v.remove(0).1.bytes()), v.is_empty()),
                        None => (None, false),
                    };
                    if empty {
                        self.map.remove(&k);
                    }
                    freed
                }
                CacheKey::Seed(k) => self.seeds.remove(&k).map(|p| p.bytes()),
            };
            self.bytes -= freed.unwrap_or(0);
        }
        true
    }
}

/// BConv tables by (source limbs, target limbs).
type ConvCache = HashMap<(Vec<usize>, Vec<usize>), Arc<ConvTables>>;

/// A ring on a device.
pub struct DeviceRing {
    pub(crate) dev: Arc<Device>,
    pub(crate) ring: Arc<RingContext>,
    pub(crate) log_n: u64,
    /// Polynomials (and twiddle tables) in 32-bit words: the `_w32` kernels.
    pub(crate) w32: bool,
    pub(crate) mods: Buffer,
    pub(crate) fwd: (Buffer, Buffer),
    pub(crate) inv: (Buffer, Buffer),
    pub(crate) n_inv: (Buffer, Buffer),
    pub(crate) limb_maps: Mutex<HashMap<Vec<usize>, Arc<Buffer>>>,
    pub(crate) consts: Mutex<HashMap<Vec<u64>, Arc<Buffer>>>,
    pub(crate) perms: Mutex<HashMap<u64, Arc<Buffer>>>,
    pub(crate) convs: Mutex<ConvCache>,
    pub(crate) cache: Mutex<HostCache>,
    pub(crate) cache_limit: u64,
}

impl std::fmt::Debug for DeviceRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRing")
            .field("device", &self.dev.name())
            .field("ring", &self.ring)
            .finish_non_exhaustive()
    }
}

impl DeviceRing {
    /// Uploads `ring`'s constants to `dev`, with 32-bit words where the ring's primes fit
    /// them ([`fits_32_bit_words`]), else 64-bit words. The host-object cache may hold up to
    /// half the device's memory limit.
    pub fn new(dev: &Arc<Device>, ring: &Arc<RingContext>) -> Result<Self> {
        Self::with_words(dev, ring, fits_32_bit_words(ring))
    }

    /// [`DeviceRing::new`] with the word size chosen: 32-bit words (`w32`) need every prime
    /// below 2^30, and a ring with a larger one is refused with the prime named.
    pub fn with_words(dev: &Arc<Device>, ring: &Arc<RingContext>, w32: bool) -> Result<Self> {
        if w32 {
            tessera_math::word32::check_word_size(ring)?;
        }
        let n = ring.n();
        let table = |v: Vec<u64>| if w32 { pack_u32(&v) } else { v };
        let mut mods = Vec::new();
        let (mut fw, mut fws, mut iw, mut iws) = (vec![], vec![], vec![], vec![]);
        let (mut ni, mut nis) = (vec![], vec![]);
        for (i, m) in ring.moduli().iter().enumerate() {
            mods.extend_from_slice(&barrett(m));
            let psi = ring.plan(i).psi();
            let (w, ws) = twiddles(m, n, psi, w32);
            fw.extend(w);
            fws.extend(ws);
            let psi_inv = m.inv(psi).expect("psi is a unit");
            let (w, ws) = twiddles(m, n, psi_inv, w32);
            iw.extend(w);
            iws.extend(ws);
            let inv = m.inv(n as u64 % m.value()).expect("N is invertible");
            ni.push(inv);
            nis.push(shoup_for(m, inv, w32));
        }
        Ok(Self {
            log_n: n.trailing_zeros() as u64,
            w32,
            mods: dev.upload(&mods)?,
            fwd: (dev.upload(&table(fw))?, dev.upload(&table(fws))?),
            inv: (dev.upload(&table(iw))?, dev.upload(&table(iws))?),
            n_inv: (dev.upload(&ni)?, dev.upload(&nis)?),
            limb_maps: Mutex::new(HashMap::new()),
            consts: Mutex::new(HashMap::new()),
            perms: Mutex::new(HashMap::new()),
            convs: Mutex::new(HashMap::new()),
            cache: Mutex::new(HostCache::default()),
            cache_limit: dev.memory_limit() / 2,
            dev: dev.clone(),
            ring: ring.clone(),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// The polynomials' word size in bits: 32 or 64.
    pub fn word_bits(&self) -> u32 {
        if self.w32 {
            32
        } else {
            64
        }
    }

    /// 64-bit device words per limb: `N`, or `N / 2` with 32-bit words.
    pub(crate) fn limb_words(&self) -> usize {
        if self.w32 {
            self.ring.n() / 2
        } else {
            self.ring.n()
        }
    }

    /// Residues in the device's word layout ([`pack_u32`] with 32-bit words).
    pub(crate) fn device_words<'a>(&self, data: &'a [u64]) -> std::borrow::Cow<'a, [u64]> {
        if self.w32 {
            std::borrow::Cow::Owned(pack_u32(data))
        } else {
            std::borrow::Cow::Borrowed(data)
        }
    }

    /// Residues from the device's word layout ([`unpack_u32`] with 32-bit words).
    pub(crate) fn host_words(&self, words: Vec<u64>) -> Vec<u64> {
        if self.w32 {
            unpack_u32(&words)
        } else {
            words
        }
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }

    /// The device array mapping limb positions to ring modulus indices (cached per limb set).
    pub(crate) fn limb_map(&self, limbs: &[usize]) -> Result<Arc<Buffer>> {
        let mut maps = self.limb_maps.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = maps.get(limbs) {
            return Ok(b.clone());
        }
        let words: Vec<u64> = limbs.iter().map(|&i| i as u64).collect();
        let b = Arc::new(self.dev.upload(&words)?);
        maps.insert(limbs.to_vec(), b.clone());
        Ok(b)
    }

    /// Per-limb constants (scalar products' and sums' operands) on the device, uploaded once
    /// per distinct vector: an upload from host memory waits for the device, so uploading
    /// them at every call would serialise the host with the GPU. The same words give the same
    /// buffer (an exact hit); at most `CONSTANT_VECTORS` are kept (then the cache restarts).
    pub(crate) fn constants(&self, words: &[u64]) -> Result<Arc<Buffer>> {
        const CONSTANT_VECTORS: usize = 4096;
        let mut c = self.consts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = c.get(words) {
            return Ok(b.clone());
        }
        if c.len() >= CONSTANT_VECTORS {
            c.clear();
        }
        let b = Arc::new(self.dev.upload(words)?);
        c.insert(words.to_vec(), b.clone());
        Ok(b)
    }

    /// (hits, misses, bytes held) of the host-object cache.
    pub fn cache_stats(&self) -> (u64, u64, u64) {
        let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        (c.hits, c.misses, c.bytes)
    }
}
