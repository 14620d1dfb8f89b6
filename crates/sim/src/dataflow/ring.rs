//! `ring` (REED, reed.md 5.2-5.3, Algorithm 3): interleaved limbs with the non-blocking
//! ring KeySwitch: a BConv's input limbs travel the ring once and each cluster computes its
//! own (home) output limbs; nothing else moves between clusters.

use super::{Ctx, Distribution, Staging};
use crate::mapping::{Lowered, Net, Pattern, Phase};

/// REED's policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ring;

impl Ring {
    /// The input limbs reach every cluster once; each converts them into its own (home)
    /// output limbs, so no output moves (also CiFHER's limb duplication, cifher.md V-A).
    pub fn lower_bconv(cx: &Ctx<'_>, l_in: usize, home: &[usize], frac: f64, out: &mut Lowered) {
        let tasks = cx.comm(Pattern::AllGather, l_in as f64 * cx.nf * cx.w, out);
        out.phases.push(Phase {
            tasks,
            latency: 0.0,
        });
        Self::convert_at_home(cx, l_in, home, frac, out);
    }

    /// Every cluster holds the whole input (`l_in` limbs, its `frac` of their coefficients)
    /// and converts it into its own (home) output limbs.
    pub fn convert_at_home(
        cx: &Ctx<'_>,
        l_in: usize,
        home: &[usize],
        frac: f64,
        out: &mut Lowered,
    ) {
        let mut ph = Phase {
            tasks: Vec::new(),
            latency: cx.m.units.bconv.latency_cycles as f64,
        };
        for (c, &lc) in home.iter().enumerate() {
            if lc > 0 {
                ph.tasks.extend(cx.bconv_tasks(c, l_in, lc, cx.nf * frac));
                out.rf_bytes += (l_in + lc) as f64 * cx.nf * frac * cx.w;
            }
        }
        out.phases.push(ph);
    }
}

impl Distribution for Ring {
    fn name(&self) -> &'static str {
        "ring"
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
        if cx.k > 1 {
            Self::lower_bconv(cx, l_in, home, frac, out);
        } else {
            cx.bconv_on_one(l_in, l_out, out);
        }
    }

    fn staging(&self, _net: &Net, k: usize, _l_in: usize, _l_out: usize) -> Staging {
        if k > 1 {
            Staging::Replicate
        } else {
            Staging::None
        }
    }
}
