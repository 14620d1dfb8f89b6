//! `resnet20`: encrypted ResNet-20 inference on CIFAR-10 (issue 21 item 1; workloads.md 3),
//! after Lee et al. (ICML'22, FHE-MP-CNN) with the option-A weights of
//! `resnet20-cifar10.npz`.
//!
//! * [`model`]: the weights (BatchNorm kept as a factor and a shift per channel) and the
//!   normalised images.
//! * [`replica`]: the network in the clear, tensor by tensor, with the exact ReLU (the float
//!   network) or AppReLU `x (1 + p(x / 40)) / 2` with the composite minimax sign
//!   `CompositeSign::lee_relu()` (the arithmetic the encrypted network does).
//! * [`packing`]: the multiplexed layout (workloads.md 3.3).
//! * [`layers`]: MPConv, the option-A shortcut, average pooling and FC on multiplexed
//!   vectors, written once over [`slots::SlotOps`]; [`packed_forward`] runs them in the clear
//!   (the packed replica, equal to the tensor replica).
//! * [`he`]: the same layers on ciphertexts, AppReLU by the sign's pieces, bootstrapping by
//!   the level rule with the sparse circuit of the layout's period (2^14 / 2^13 / 2^12 slots
//!   in stages 1 / 2 / 3, as FHE-MP-CNN); [`encrypted_forward`].
//! * [`program`]: `tessera run resnet20` (checked against the replica) and its recording.

pub mod he;
pub mod layers;
pub mod model;
pub mod packing;
pub mod program;
pub mod replica;
pub mod slots;

use crate::error::Result;
use crate::setup::Setup;
use model::{argmax, Model};
use replica::{forward, image_tensor, Activation, Tensor, BOUND};
use slots::Clear;
use std::collections::BTreeSet;
use tessera_backend::Backend;
use tessera_ckks::circuits::sign::CompositeSign;
use tessera_ckks::Ciphertext;

/// What a replica run over images found.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaAccuracy {
    /// Images classified.
    pub images: usize,
    /// Images whose top-1 class is the label.
    pub correct: usize,
    /// The largest pre-activation magnitude met.
    pub max_pre_activation: f64,
    /// Each image's top-1 class.
    pub predictions: Vec<usize>,
}

/// Classifies the normalised `images` with the replica and counts agreement with `labels`.
pub fn replica_accuracy(
    model: &Model,
    images: &[Vec<f64>],
    labels: &[u8],
    act: Activation,
) -> Result<ReplicaAccuracy> {
    let mut out = ReplicaAccuracy {
        images: images.len(),
        correct: 0,
        max_pre_activation: 0.0,
        predictions: Vec::with_capacity(images.len()),
    };
    for (img, &label) in images.iter().zip(labels) {
        let (logits, pre) = forward(model, &image_tensor(img, 32), act);
        let p = argmax(&logits);
        out.correct += usize::from(p == label as usize);
        out.max_pre_activation = out.max_pre_activation.max(pre);
        out.predictions.push(p);
    }
    Ok(out)
}

/// What the encrypted network will need, seen by the packed replica ([`slots::Clear`]): the
/// rotation steps it takes (the layers' rotations and the FC's BSGS steps, recorded as the
/// layer code makes them) and the slot periods it bootstraps at (the layouts' copies, checked
/// on the values), which choose the sparse circuits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Rotation steps (their keys).
    pub rotations: BTreeSet<i64>,
    /// Slot periods at the points that may bootstrap.
    pub periods: BTreeSet<usize>,
}

/// The packed replica: `image` (a normalised `(3, h, w)` tensor) packed in `n` slots in units
/// of [`BOUND`], the network of [`layers`] in the clear with AppReLU by `sign`. Returns the
/// logits and what the encrypted network needs ([`Needs`]).
pub fn packed_forward(
    model: &Model,
    image: &Tensor,
    n: usize,
    sign: &CompositeSign,
) -> Result<(Vec<f64>, Needs)> {
    let sh = layers::input_shape(image.h, n)?;
    let x = packed_input(image, n)?;
    let fc_m = layers::fc_matrix(model, n)?;
    let mut clear = Clear::new(n, sign);
    let y = layers::network(&mut clear, model, &fc_m, &x, &sh, BOUND, &mut |_, _| {})?;
    let needs = Needs {
        rotations: clear.rotations,
        periods: clear.periods,
    };
    Ok((y[..model::CLASSES].to_vec(), needs))
}

/// What the network needs on `side x side` images in `n` slots (the rotations depend on the
/// layout and on which weight vectors are zero, the periods on the layout; neither on the
/// image).
pub fn needs(model: &Model, side: usize, n: usize, sign: &CompositeSign) -> Result<Needs> {
    let zero = Tensor::zeros(3, side, side);
    Ok(packed_forward(model, &zero, n, sign)?.1)
}

/// The rotation steps (keys) the network takes on `side x side` images in `n` slots.
pub fn rotations(model: &Model, side: usize, n: usize, sign: &CompositeSign) -> Result<Vec<i64>> {
    Ok(needs(model, side, n, sign)?.rotations.into_iter().collect())
}

/// The packed input of `image` in units of [`BOUND`], the first layout of the network.
pub fn packed_input(image: &Tensor, n: usize) -> Result<Vec<f64>> {
    let sh = layers::input_shape(image.h, n)?;
    sh.pack(&Tensor {
        data: image.data.iter().map(|v| v / BOUND).collect(),
        ..image.clone()
    })
}

/// The network on the encrypted packed image `x` (`side x side`): the ciphertext of the
/// logits at slots `0 .. 10`.
pub fn encrypted_forward<B: Backend>(
    enc: &mut he::Encrypted<'_, B>,
    model: &Model,
    fc_m: &tessera_ckks::circuits::linear::LinearTransform,
    x: &Ciphertext<B::Poly>,
    side: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Ciphertext<B::Poly>> {
    let sh = layers::input_shape(side, x.slots)?;
    layers::network(enc, model, fc_m, x, &sh, BOUND, progress)
}

/// Keys for the network on `side x side` images at parameter set `params`, `n` slots, with a
/// sparse bootstrapping circuit for every period the layouts repeat with (FHE-MP-CNN's
/// per-stage sparse bootstrapping: at 2^14 slots, 2^14 / 2^13 / 2^12 in stages 1 / 2 / 3).
pub fn setup(
    params: &str,
    model: &Model,
    side: usize,
    n: usize,
    sign: &CompositeSign,
) -> Result<Setup> {
    let needs = needs(model, side, n, sign)?;
    let rotations: Vec<i64> = needs.rotations.into_iter().collect();
    let periods: Vec<usize> = needs.periods.into_iter().collect();
    Setup::with_sparse(params, n, &periods, &rotations)
}
