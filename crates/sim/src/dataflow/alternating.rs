//! `alternating` (ARK, ark.md V-B): limb-wise everywhere, switching to coefficient-wise
//! around every BConv with an all-to-all exchange on the NoC. The paper counts
//! `(alpha + L + 1) N` words per BConvRoutine, of which a cluster keeps 1/k.

use super::{Ctx, Distribution, Staging};
use crate::mapping::{Lowered, Net, Pattern, Phase};

/// ARK's policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alternating;

impl Alternating {
    /// Limb-wise -> coefficient-wise, BConv on every cluster, and back.
    pub fn lower_bconv(cx: &Ctx<'_>, l_in: usize, l_out: usize, out: &mut Lowered) {
        if cx.k < 2 {
            cx.bconv_on_one(l_in, l_out, out);
            return;
        }
        let tasks = cx.comm(Pattern::AllToAll, l_in as f64 * cx.nf * cx.w, out);
        out.phases.push(Phase {
            tasks,
            latency: 0.0,
        });
        Self::convert_and_return(cx, l_in, l_out, out);
    }

    /// With the input already coefficient-wise: the BConv on every cluster, and its
    /// `l_out` output limbs back to limb-wise (all-to-all).
    pub fn convert_and_return(cx: &Ctx<'_>, l_in: usize, l_out: usize, out: &mut Lowered) {
        if cx.k < 2 {
            cx.bconv_on_one(l_in, l_out, out);
            return;
        }
        cx.bconv_everywhere(l_in, l_out, out);
        let tasks = cx.comm(Pattern::AllToAll, l_out as f64 * cx.nf * cx.w, out);
        out.phases.push(Phase {
            tasks,
            latency: 0.0,
        });
    }
}

impl Distribution for Alternating {
    fn name(&self) -> &'static str {
        "alternating"
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
        Self::lower_bconv(cx, l_in, l_out, out);
    }

    fn staging(&self, _net: &Net, k: usize, _l_in: usize, _l_out: usize) -> Staging {
        if k > 1 {
            Staging::Redistribute
        } else {
            Staging::None
        }
    }
}
