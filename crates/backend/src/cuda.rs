//! The CUDA backend (cargo feature `cuda`): every primary function runs as kernels of
//! `tessera-cuda` on polynomials resident in GPU memory. Keys and plaintexts are uploaded once
//! (cached by host identity); ciphertexts move only at `load` and `store`.
//!
//! The seeded key's PRNG expansion runs on the host and is uploaded once per seed (the BLAKE3
//! XOF is not yet ported to the device); `dot_pair_seeded_key`'s two inner products run as one
//! pass over the digits, `sub_mul_scalar` as one pass, and `add_assign` in place.

use crate::{Backend, HostPoly, Kind, Word};
use std::sync::Arc;
use tessera_cuda::{Device, DevicePoly, DeviceRing};
use tessera_math::sampling::Seed;
use tessera_math::{ConversionMode, MathError, Representation, RingContext, RnsPoly};

/// Computes every primary function on a CUDA device.
#[derive(Clone, Debug)]
pub struct CudaBackend {
    ring: Arc<RingContext>,
    dev: Arc<DeviceRing>,
}

impl CudaBackend {
    /// A CUDA backend over `ring` on device 0 (or `TESSERA_CUDA_DEVICE`), in 32-bit words
    /// where the ring's primes fit them ([`Word::choose_gpu`]; `TESSERA_WORD` overrides).
    /// Without a driver, NVRTC or a device this is `MathError::Unsupported` with the reason.
    pub fn new(ring: Arc<RingContext>) -> Result<Self, MathError> {
        let word = Word::choose_gpu(None, &ring)?;
        Self::with_word(ring, word)
    }

    /// [`CudaBackend::new`] with the word size given: 32-bit words need every prime of the
    /// ring below 2^30 (else a typed error naming the prime).
    pub fn with_word(ring: Arc<RingContext>, word: Word) -> Result<Self, MathError> {
        let ordinal = match std::env::var("TESSERA_CUDA_DEVICE") {
            Ok(v) => v.parse::<usize>().map_err(|_| MathError::OutOfRange {
                name: "TESSERA_CUDA_DEVICE",
                value: v.clone(),
                allowed: "a device ordinal (0, 1, ...)".into(),
            })?,
            Err(_) => 0,
        };
        let dev = Device::open(ordinal).map_err(MathError::from)?;
        Self::on_device(&dev, ring, word)
    }

    /// A CUDA backend over `ring` on an opened device (a GPU, or [`Device::emulated`] for
    /// tests without one), with polynomials in `word`-sized words.
    pub fn on_device(
        dev: &Arc<Device>,
        ring: Arc<RingContext>,
        word: Word,
    ) -> Result<Self, MathError> {
        let dr = DeviceRing::with_words(dev, &ring, word == Word::W32).map_err(MathError::from)?;
        Ok(Self {
            ring,
            dev: Arc::new(dr),
        })
    }

    /// A CUDA backend whose kernels run on this CPU ([`Device::emulated`]: the same kernel
    /// sources compiled by the host C++ compiler), with [`CudaBackend::new`]'s word size: for
    /// tests without a GPU, never for timing.
    pub fn emulated(ring: Arc<RingContext>) -> Result<Self, MathError> {
        let word = Word::choose_gpu(None, &ring)?;
        Self::emulated_with_word(ring, word)
    }

    /// [`CudaBackend::emulated`] with the word size given.
    pub fn emulated_with_word(ring: Arc<RingContext>, word: Word) -> Result<Self, MathError> {
        let dev = Device::emulated().map_err(MathError::from)?;
        Self::on_device(&dev, ring, word)
    }

    /// The polynomials' word size on the device.
    pub fn word(&self) -> Word {
        if self.dev.word_bits() == 32 {
            Word::W32
        } else {
            Word::W64
        }
    }

    /// The device (memory use, peak, limit).
    pub fn device(&self) -> &Arc<Device> {
        self.dev.device()
    }

    /// The ring's device state (key cache statistics).
    pub fn device_ring(&self) -> &Arc<DeviceRing> {
        &self.dev
    }
}

fn e(err: tessera_cuda::CudaError) -> MathError {
    err.into()
}

impl Backend for CudaBackend {
    type Poly = DevicePoly;

    fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }
    fn limbs(&self, p: &DevicePoly) -> Vec<usize> {
        p.limbs().to_vec()
    }
    fn repr(&self, p: &DevicePoly) -> Representation {
        p.repr()
    }
    /// Keys and plaintexts are cached on the device by host identity; other data is uploaded.
    fn load(&mut self, host: &RnsPoly, kind: Kind) -> Result<DevicePoly, MathError> {
        match kind {
            Kind::EvalKey | Kind::Plaintext => self.dev.upload_cached(host),
            Kind::Ciphertext | Kind::Constant => self.dev.upload(host),
        }
        .map_err(e)
    }
    /// Some limbs of a key or plaintext ([`HostPoly::Limbs`]): the whole object is cached on
    /// the device (the same host buffer at every load, so the cache's hit needs no compare)
    /// and the limbs are selected there, instead of a host copy and upload per load.
    fn load_host(&mut self, host: &HostPoly, kind: Kind) -> Result<DevicePoly, MathError> {
        match (host, kind) {
            (HostPoly::Limbs { whole, limbs }, Kind::EvalKey | Kind::Plaintext) => {
                let resident = self.dev.upload_cached(whole).map_err(e)?;
                self.dev.select_limbs(&resident, limbs).map_err(e)
            }
            _ => self.load(&*host.data()?, kind),
        }
    }
    fn store(&mut self, p: &DevicePoly) -> Result<RnsPoly, MathError> {
        self.dev.download(p).map_err(e)
    }
    fn expand_seed(
        &mut self,
        seed: &Seed,
        limbs: &[usize],
        _kind: Kind,
    ) -> Result<DevicePoly, MathError> {
        self.dev.expand_seed(seed, limbs).map_err(e)
    }
    /// The trait's loads and expansions in its order (the key halves cached on the device),
    /// then both inner products in one pass over the digits ([`DeviceRing::dot_pair`]).
    fn dot_pair_seeded_key(
        &mut self,
        ups: &[&DevicePoly],
        key_b: &[HostPoly],
        seeds: &[Seed],
        limbs: &[usize],
    ) -> Result<(DevicePoly, DevicePoly), MathError> {
        let mut bs = Vec::with_capacity(key_b.len());
        let mut us = Vec::with_capacity(seeds.len());
        for (b, seed) in key_b.iter().zip(seeds) {
            bs.push(self.load_host(b, Kind::EvalKey)?);
            us.push(self.expand_seed(seed, limbs, Kind::EvalKey)?);
        }
        self.dev
            .dot_pair(
                ups,
                &bs.iter().collect::<Vec<_>>(),
                &us.iter().collect::<Vec<_>>(),
            )
            .map_err(e)
    }
    fn ntt(&mut self, p: &mut DevicePoly) -> Result<(), MathError> {
        self.dev.ntt(p).map_err(e)
    }
    fn intt(&mut self, p: &mut DevicePoly) -> Result<(), MathError> {
        self.dev.intt(p).map_err(e)
    }
    fn add(&mut self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly, MathError> {
        self.dev.add(a, b).map_err(e)
    }
    /// In place on the device (no new polynomial).
    fn add_assign(&mut self, a: &mut DevicePoly, b: &DevicePoly) -> Result<(), MathError> {
        self.dev.add_assign(a, b).map_err(e)
    }
    fn sub(&mut self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly, MathError> {
        self.dev.sub(a, b).map_err(e)
    }
    fn neg(&mut self, a: &DevicePoly) -> Result<DevicePoly, MathError> {
        self.dev.neg(a).map_err(e)
    }
    fn mul(&mut self, a: &DevicePoly, b: &DevicePoly) -> Result<DevicePoly, MathError> {
        self.dev.mul(a, b).map_err(e)
    }
    fn mul_acc(
        &mut self,
        acc: &mut DevicePoly,
        a: &DevicePoly,
        b: &DevicePoly,
    ) -> Result<(), MathError> {
        self.dev.mul_acc(acc, a, b).map_err(e)
    }
    fn add_scalar(&mut self, a: &DevicePoly, c: &[u64]) -> Result<DevicePoly, MathError> {
        self.dev.add_scalar(a, c).map_err(e)
    }
    fn dot(&mut self, a: &[&DevicePoly], b: &[&DevicePoly]) -> Result<DevicePoly, MathError> {
        self.dev.dot(a, b).map_err(e)
    }
    fn mul_scalar(&mut self, a: &DevicePoly, c: &[u64]) -> Result<DevicePoly, MathError> {
        self.dev.mul_scalar(a, c).map_err(e)
    }
    /// One pass on the device (`ew_sub_mul_const`).
    fn sub_mul_scalar(
        &mut self,
        a: &DevicePoly,
        b: &DevicePoly,
        c: &[u64],
    ) -> Result<DevicePoly, MathError> {
        self.dev.sub_mul_scalar(a, b, c).map_err(e)
    }
    fn automorphism(&mut self, a: &DevicePoly, g: u64) -> Result<DevicePoly, MathError> {
        self.dev.automorphism(a, g).map_err(e)
    }
    fn bconv(
        &mut self,
        a: &DevicePoly,
        to: &[usize],
        mode: ConversionMode,
    ) -> Result<DevicePoly, MathError> {
        self.dev.bconv(a, to, mode).map_err(e)
    }
    fn select_limbs(&mut self, a: &DevicePoly, keep: &[usize]) -> Result<DevicePoly, MathError> {
        self.dev.select_limbs(a, keep).map_err(e)
    }
    fn concat(&mut self, parts: &[&DevicePoly], limbs: &[usize]) -> Result<DevicePoly, MathError> {
        self.dev.concat(parts, limbs).map_err(e)
    }
    /// Assembled in place on the device ([`DeviceRing::extend_digit`]); operands that are not
    /// a ModUp's run the trait's composition, for its errors.
    fn extend_digit(
        &mut self,
        digit: &DevicePoly,
        own: &DevicePoly,
        to: &[usize],
    ) -> Result<DevicePoly, MathError> {
        match self.dev.extend_digit(digit, own, to).map_err(e)? {
            Some(p) => Ok(p),
            None => crate::compose_extend_digit(self, digit, own, to),
        }
    }
    fn extend_limb(&mut self, a: &DevicePoly, to: &[usize]) -> Result<DevicePoly, MathError> {
        self.dev.extend_limb(a, to).map_err(e)
    }
    fn begin_op(&mut self, _name: &'static str, _level: usize) {}
    fn end_op(&mut self) {}
    fn synchronize(&mut self) -> Result<(), MathError> {
        self.dev.device().synchronize().map_err(e)
    }
    fn device_report(&self) -> Option<crate::DeviceReport> {
        let d = self.dev.device();
        Some(crate::DeviceReport {
            name: d.name(),
            capacity_bytes: d.capacity(),
            bytes_in_use: d.bytes_in_use(),
            peak_bytes: d.peak_bytes(),
        })
    }
}
