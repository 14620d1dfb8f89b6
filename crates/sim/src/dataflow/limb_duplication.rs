//! `limb-duplication` (CiFHER, cifher.md V-A): per BConv, broadcast the input limbs to
//! every cluster and compute the output limbs where they live ([`super::ring`]'s lowering)
//! when Eq. 3 says that moves less than ARK's redistribution of inputs and outputs;
//! otherwise ARK's alternating method ([`super::alternating`]).

use super::alternating::Alternating;
use super::ring::Ring;
use super::{Ctx, Distribution, Staging};
use crate::mapping::{Lowered, Net};

/// CiFHER's policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimbDuplication;

impl Distribution for LimbDuplication {
    fn name(&self) -> &'static str {
        "limb-duplication"
    }

    fn bconv(
        &self,
        cx: &Ctx<'_>,
        l_in: usize,
        l_out: usize,
        home: &[usize],
        frac: f64,
        out: &mut Lowered,
    ) {
        if cx.k > 1 && cx.net.duplication_saving(l_in, l_out) > 0.0 {
            Ring::lower_bconv(cx, l_in, home, frac, out);
        } else {
            Alternating::lower_bconv(cx, l_in, l_out, out);
        }
    }

    /// Eq. 3 on the whole BConv (every output tile together), as its untiled lowering
    /// decides: broadcast when duplication saves limbs, else ARK's redistribution.
    fn staging(&self, net: &Net, k: usize, l_in: usize, l_out: usize) -> Staging {
        if k < 2 {
            Staging::None
        } else if net.duplication_saving(l_in, l_out) > 0.0 {
            Staging::Replicate
        } else {
            Staging::Redistribute
        }
    }
}
