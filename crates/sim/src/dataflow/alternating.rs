//! `alternating` (ARK, ark.md V-B): limb-wise everywhere, switching to coefficient-wise
//! around every BConv with an all-to-all exchange on the NoC. The paper counts
//! `(alpha + L + 1) N` words per BConvRoutine, of which a cluster keeps 1/k.

use super::{Ctx, Distribution};
use crate::mapping::{Lowered, Pattern, Phase};

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
}
