//! # tessera-bfv
//!
//! BFV on 128-bit words, the scheme CoFHEE runs (cofhee.md III-A, Eq. 4, Algorithm 3): batch
//! encoding mod a prime `t = 1 mod 2n`, public-key encryption, decryption with the measured
//! noise budget, addition, plaintext and constant multiplication, and exact ciphertext
//! multiplication (Eq. 4 over an extended basis, scaled by `t/q` on the host) with
//! relinearisation. Parameters: n = 2^12 with one 109-bit tower and n = 2^13 with two
//! ([`BfvParams::preset`]), labelled against the HE standard's 128-bit bound.
//!
//! Every evaluator operation can record the commands it issues ([`Bfv::start_recording`]) in
//! the trace format the CoFHEE model consumes; [`record`] turns an application's op mix into
//! that stream from real ciphertexts whose results are checked.
//!
//! ```
//! use tessera_bfv::{BatchEncoder, Bfv, BfvParams, Decryptor, Encryptor, KeyGenerator};
//! use tessera_math::sampling::Seed;
//!
//! # fn main() -> tessera_bfv::Result<()> {
//! let bfv = Bfv::new(&BfvParams::preset("test-bfv")?)?;
//! let kg = KeyGenerator::new(&bfv, Seed([1; 32]));
//! let sk = kg.secret_key()?;
//! let (pk, rk) = (kg.public_key(&sk)?, kg.relin_key(&sk)?);
//! let enc = BatchEncoder::new(&bfv)?;
//! let mut encryptor = Encryptor::new(&bfv, &pk, Seed([2; 32]));
//! let a = encryptor.encrypt(&enc.encode_signed(&[3, -4, 5])?)?;
//! let b = encryptor.encrypt(&enc.encode_signed(&[10, 20, -30])?)?;
//! let c = bfv.add(&bfv.mul_relin(&a, &b, &rk)?, &a)?; // a * b + a
//! let dec = Decryptor::new(&bfv, &sk);
//! assert_eq!(&enc.decode_signed(&dec.decrypt(&c)?)[..3], &[33, -84, -145]);
//! assert!(dec.noise_budget(&c)? > 0.0);
//! # Ok(())
//! # }
//! ```

pub mod context;
pub mod crt;
pub mod crypt;
pub mod encoder;
pub mod error;
pub mod eval;
pub mod keys;
pub mod params;
pub mod record;
pub mod reference;
pub mod tape;

pub use context::{Bfv, Ciphertext, Plaintext, Poly};
pub use crypt::{fresh_noise_bound, Decryptor, Encryptor};
pub use encoder::BatchEncoder;
pub use error::{BfvError, Result};
pub use keys::{KeyGenerator, PublicKey, RelinKey, SecretKey};
pub use params::{BfvParams, Security, PRESETS};
pub use record::{record, record_blocks, OpBlock, OpMix};
