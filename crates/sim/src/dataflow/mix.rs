//! `mix`: a user-defined distribution, one named policy per job (`[chip.mix]` in the
//! machine file: `layout`, `bconv`, `key_dot`, each one of the other policies). For
//! example `layout = "limb-wise"`, `bconv = "ring"`, `key_dot = "limb-wise"` spreads limbs as
//! ARK does, converts bases as REED does and moves inner-product partial sums as ARK's
//! limb-wise comparison design does.

use super::{simple, Ctx, Distribution, Staging};
use crate::machine::MixSpec;
use crate::mapping::{Lowered, Net, Resource};

/// A mix of policies, one per job.
#[derive(Clone, Copy)]
pub struct Mix {
    layout: &'static dyn Distribution,
    bconv: &'static dyn Distribution,
    key_dot: &'static dyn Distribution,
}

impl Mix {
    /// The mix of `s`.
    pub fn from_spec(s: &MixSpec) -> Self {
        Self {
            layout: simple(s.layout),
            bconv: simple(s.bconv),
            key_dot: simple(s.key_dot),
        }
    }

    /// `p` for every job (a machine that names one policy).
    pub fn uniform(p: &'static dyn Distribution) -> Self {
        Self {
            layout: p,
            bconv: p,
            key_dot: p,
        }
    }
}

impl Distribution for Mix {
    fn name(&self) -> &'static str {
        "mix"
    }

    fn layout(&self, net: &Net, limbs: &[usize]) -> (Vec<usize>, f64) {
        self.layout.layout(net, limbs)
    }

    fn transform_exchange(&self, cx: &Ctx<'_>, bytes: f64, out: &mut Lowered) {
        self.layout.transform_exchange(cx, bytes, out);
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
        self.bconv.bconv(cx, l_in, l_out, home, frac, out);
    }

    fn staging(&self, net: &Net, k: usize, l_in: usize, l_out: usize) -> Staging {
        self.bconv.staging(net, k, l_in, l_out)
    }

    fn key_dot(
        &self,
        cx: &Ctx<'_>,
        pairs: usize,
        limbs: usize,
        out: &mut Lowered,
    ) -> Vec<(Resource, f64)> {
        self.key_dot.key_dot(cx, pairs, limbs, out)
    }
}
