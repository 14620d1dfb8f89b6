//! [`DevicePoly`]: an RNS polynomial whose limbs live in device memory (limb-major, `N` words
//! per limb, like `RnsPoly`). Clones share the buffer; an in-place operation on a shared
//! buffer copies it first (copy-on-write), so a clone never sees another's writes.

use crate::device::Buffer;
use std::sync::Arc;
use tessera_math::{Representation, RingContext};

/// A polynomial resident on the device.
#[derive(Clone)]
pub struct DevicePoly {
    pub(crate) ring: Arc<RingContext>,
    pub(crate) buf: Arc<Buffer>,
    pub(crate) limbs: Vec<usize>,
    pub(crate) repr: Representation,
}

impl std::fmt::Debug for DevicePoly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevicePoly")
            .field("n", &self.ring.n())
            .field("limbs", &self.limbs)
            .field("repr", &self.repr)
            .finish_non_exhaustive()
    }
}

impl DevicePoly {
    /// Ring indices of the limbs.
    pub fn limbs(&self) -> &[usize] {
        &self.limbs
    }

    /// The representation.
    pub fn repr(&self) -> Representation {
        self.repr
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }

    /// Bytes of device memory the polynomial's buffer takes.
    pub fn bytes(&self) -> u64 {
        self.buf.words() as u64 * 8
    }

    /// Modulus values of the limbs.
    pub(crate) fn moduli(&self) -> Vec<u64> {
        self.limbs
            .iter()
            .map(|&i| self.ring.moduli()[i].value())
            .collect()
    }
}
