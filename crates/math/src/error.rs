//! Typed errors of the math layer.
//!
//! Every public constructor and every operation that combines operands validates its input and
//! returns one of these instead of panicking, so that bad parameters reach the user as a message
//! naming the parameter and its allowed range.

use thiserror::Error;

/// Errors raised by the math layer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MathError {
    /// The ring degree is not a power of two or lies outside the supported range.
    #[error("ring degree N = {n} is not supported: N must be a power of two in [{min}, {max}]")]
    InvalidDegree { n: usize, min: usize, max: usize },

    /// A modulus lies outside the range the word-size arithmetic supports.
    #[error(
        "modulus q = {q} has {bits} bits; supported moduli have {min_bits} to {max_bits} bits"
    )]
    ModulusOutOfRange {
        q: u64,
        bits: u32,
        min_bits: u32,
        max_bits: u32,
    },

    /// A modulus is composite.
    #[error("modulus q = {q} is not prime")]
    NotPrime { q: u64 },

    /// A prime does not support a negacyclic NTT of the requested degree.
    #[error(
        "modulus q = {q} is not NTT-friendly for N = {n}: need q = 1 mod 2N = {two_n}, but q mod 2N = {rem}"
    )]
    NotNttFriendly {
        q: u64,
        n: usize,
        two_n: u64,
        rem: u64,
    },

    /// Not enough primes of the requested size exist.
    #[error("only {found} of the {count} requested {bits}-bit primes q = 1 mod {two_n} exist")]
    NotEnoughPrimes {
        bits: u32,
        two_n: u64,
        count: usize,
        found: usize,
    },

    /// A requested prime bit size is outside the supported range.
    #[error("prime size of {bits} bits is not supported: allowed range is {min} to {max} bits")]
    PrimeBitsOutOfRange { bits: u32, min: u32, max: u32 },

    /// Two operands live over different limb sets (RNS bases).
    #[error("{op}: limb sets differ (left has moduli {left:?}, right has {right:?})")]
    LimbMismatch {
        op: &'static str,
        left: Vec<u64>,
        right: Vec<u64>,
    },

    /// Two operands belong to different ring contexts (built separately, even if equal).
    #[error(
        "{op}: operands belong to different ring contexts; build every object from one context"
    )]
    RingMismatch { op: &'static str },

    /// Two operands are in different representations, or the operation needs the other one.
    #[error("{op}: operand is in {found} representation, {expected} representation is required")]
    RepresentationMismatch {
        op: &'static str,
        expected: &'static str,
        found: &'static str,
    },

    /// A buffer has the wrong length.
    #[error("{what}: length {found} does not match the expected {expected}")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },

    /// A value is outside its documented range.
    #[error("{name} = {value} is out of range: {allowed}")]
    OutOfRange {
        name: &'static str,
        value: String,
        allowed: String,
    },

    /// A modulus was requested that the ring does not hold.
    #[error("modulus q = {q} is not part of this ring's moduli")]
    UnknownModulus { q: u64 },

    /// The operation is not supported by this component.
    #[error("not supported: {0}")]
    Unsupported(String),

    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed: {0}")]
    Entropy(String),
}

/// Convenience alias used across the math layer.
pub type Result<T> = std::result::Result<T, MathError>;
