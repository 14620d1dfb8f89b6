//! The DFTs' linear transforms: the circuits' BSGS evaluation by diagonals
//! ([`crate::circuits::linear`]), re-exported under the name the bootstrapping code and its
//! users know.

pub use crate::circuits::linear::{
    apply, BsgsPlan, DiagonalCache, EncodedDiagonal, Encoding, LinearTransform,
};
