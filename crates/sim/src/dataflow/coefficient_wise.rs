//! `coefficient-wise`: every limb is split by coefficients over all the clusters, all the
//! time (CiFHER's coefficient scattering, cifher.md IV-C, the whole mesh as one block, here
//! on any interconnect). Element-wise work and BConv need no exchange (each cluster holds
//! the same coefficients of every limb, and a BConv works coefficient by coefficient); an
//! (i)NTT or automorphism moves coefficients between all clusters (an all-to-all of its data:
//! the transpose of the four-step transform, the permutation of an automorphism).

use super::{Ctx, Distribution};
use crate::mapping::{Lowered, Net, Pattern, Phase};

/// Coefficient scattering over the whole machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoefficientWise;

impl Distribution for CoefficientWise {
    fn name(&self) -> &'static str {
        "coefficient-wise"
    }

    fn layout(&self, net: &Net, limbs: &[usize]) -> (Vec<usize>, f64) {
        let k = net.block_of.len().max(1);
        (vec![limbs.len(); k], 1.0 / k as f64)
    }

    fn transform_exchange(&self, cx: &Ctx<'_>, bytes: f64, out: &mut Lowered) {
        if cx.k > 1 {
            let tasks = cx.comm(Pattern::AllToAll, bytes, out);
            if !tasks.is_empty() {
                out.phases.push(Phase {
                    tasks,
                    latency: 0.0,
                });
            }
        }
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
        cx.bconv_everywhere(l_in, l_out, out);
    }
}
