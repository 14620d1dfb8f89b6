//! Circuits over the evaluator: the building blocks of applications and of bootstrapping
//! (`docs/circuits.md` explains the algorithms, their depths and rotation counts).
//!
//! - [`polynomial`]: polynomials in the power and Chebyshev bases, evaluated by baby-step
//!   giant-step with odd/even specialisation at minimal depth.
//! - [`sums`]: rotate-and-sum and replication.
//! - [`linear`]: linear transformations by diagonals with BSGS and hoisted baby steps.
//! - [`remez`]: our Remez exchange for minimax polynomials on unions of intervals.
//! - [`sign`]: composite sign and comparison (Cheon-Kim-Kim; Lee et al.'s minimax), AppReLU.
//! - [`inverse`]: `1/x` by Goldschmidt iterations.

mod double_hoisting;
pub mod inverse;
pub mod linear;
pub mod polynomial;
pub mod remez;
pub mod sign;
pub mod sums;
