//! `resnet20`: encrypted ResNet-20 inference on CIFAR-10 (issue 21 item 1; workloads.md 3),
//! after Lee et al. (ICML'22, FHE-MP-CNN) with the option-A weights of
//! `resnet20-cifar10.npz`.
//!
//! * [`model`]: the weights (BatchNorm kept as a factor and a shift per channel) and the
//!   normalised images.
//! * [`replica`]: the network in the clear, tensor by tensor, with the exact ReLU (the float
//!   network) or AppReLU `x (1 + p(x / 40)) / 2` with the composite minimax sign
//!   `CompositeSign::lee_relu()` (the arithmetic the encrypted network does).

pub mod model;
pub mod replica;

use crate::error::Result;
use model::{argmax, Model};
use replica::{forward, image_tensor, Activation};

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
