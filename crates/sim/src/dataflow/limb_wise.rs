//! `limb-wise` (ark.md V-B, the comparison design of VI-D): limb-wise only. A BConv runs
//! whole on one cluster (round robin), and a key-switch inner product moves the partial
//! products of every digit to each limb's home over the NoC.

use super::{Ctx, Distribution};
use crate::mapping::{Lowered, Pattern, Resource};

/// Limb-wise only.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimbWise;

impl LimbWise {
    /// Each digit's product was formed on its own cluster: the partial sums of every limb
    /// travel to the limb's home (ark.md V-B).
    pub fn partial_sums(
        cx: &Ctx<'_>,
        pairs: usize,
        limbs: usize,
        out: &mut Lowered,
    ) -> Vec<(Resource, f64)> {
        let bytes = pairs as f64 * limbs as f64 * cx.nf * cx.w;
        cx.comm(Pattern::AllToAll, bytes, out)
    }
}

impl Distribution for LimbWise {
    fn name(&self) -> &'static str {
        "limb-wise"
    }

    fn bconv(
        &self,
        cx: &Ctx<'_>,
        l_in: usize,
        l_out: usize,
        _home: &[usize],
        _frac: f64,
        out: &mut Lowered,
    ) {
        cx.bconv_on_one(l_in, l_out, out);
    }

    fn key_dot(
        &self,
        cx: &Ctx<'_>,
        pairs: usize,
        limbs: usize,
        out: &mut Lowered,
    ) -> Vec<(Resource, f64)> {
        Self::partial_sums(cx, pairs, limbs, out)
    }
}
