//! ResNet-20 for CIFAR-10 (workloads.md 3.2): the weights of `resnet20-cifar10.npz` with
//! BatchNorm folded into each convolution, and the CIFAR-10 test images, normalised.
//!
//! Network: conv 3x3 (3 -> 16) + BN + ReLU; three stages of three basic blocks (16, 32, 64
//! channels; the first block of stages 2 and 3 has stride 2); per block
//! `conv1 -> BN -> ReLU -> conv2 -> BN -> (+ shortcut) -> ReLU`; global average pooling 8 x 8;
//! FC 64 -> 10. Option-A shortcuts (Idelbayev's `LambdaLayer`): the input subsampled at even
//! rows and columns and zero-padded with `planes / 4` channels on each side.
//!
//! BatchNorm (eps 1e-5) folds into the convolution before it: with
//! `f = gamma / sqrt(var + eps)`, `BN(conv(x)) = f conv(x) + (beta - f mean)`. The encrypted
//! network applies `f` in its select masks and the shift as a plaintext (workloads.md 3.4);
//! [`Conv`] keeps the raw weights, `f` and the shift apart so both use the same numbers.

use crate::data::{member, read_npz, Array};
use crate::error::{ProgramError, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The weights file.
pub const WEIGHTS_FILE: &str = "resnet20-cifar10.npz";
/// The images file (the first 932 CIFAR-10 test images).
pub const IMAGES_FILE: &str = "cifar10-test-head.npz";
/// BatchNorm's epsilon.
pub const BN_EPS: f64 = 1e-5;
/// Classes.
pub const CLASSES: usize = 10;
/// Input normalisation (shared/data/README.md): per channel mean and std after `/ 255`.
pub const MEAN: [f64; 3] = [0.485, 0.456, 0.406];
/// See [`MEAN`].
pub const STD: [f64; 3] = [0.229, 0.224, 0.225];

/// One 3x3 convolution (padding 1) with the BatchNorm after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    /// Input channels.
    pub cin: usize,
    /// Output channels.
    pub cout: usize,
    /// Stride (1 or 2).
    pub stride: usize,
    /// Raw weights, `(cout, cin, 3, 3)` in C order.
    pub weight: Vec<f64>,
    /// BatchNorm factor per output channel, `gamma / sqrt(var + eps)`.
    pub factor: Vec<f64>,
    /// BatchNorm shift per output channel, `beta - factor * mean`.
    pub shift: Vec<f64>,
}

impl Conv {
    /// The raw weight `w[o][i][dy][dx]`.
    pub fn w(&self, o: usize, i: usize, dy: usize, dx: usize) -> f64 {
        self.weight[((o * self.cin + i) * 3 + dy) * 3 + dx]
    }
}

/// A basic block: two convolutions and the shortcut.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// `conv1 + BN1` (its stride is the block's).
    pub conv1: Conv,
    /// `conv2 + BN2`.
    pub conv2: Conv,
}

impl Block {
    /// Whether the shortcut downsamples (option A).
    pub fn downsamples(&self) -> bool {
        self.conv1.stride == 2 || self.conv1.cin != self.conv1.cout
    }
}

/// The network's weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The stem, `conv1 + bn1`.
    pub stem: Conv,
    /// The nine blocks (stage 1, 2, 3).
    pub blocks: Vec<Block>,
    /// FC weights `(classes, channels)` in C order.
    pub fc: Vec<f64>,
    /// FC bias.
    pub fc_bias: Vec<f64>,
}

fn get<'a>(
    npz: &'a BTreeMap<String, Array>,
    key: &str,
    shape: &[Option<usize>],
) -> Result<&'a Array> {
    let a = member(npz, WEIGHTS_FILE, key)?;
    a.expect_shape(WEIGHTS_FILE, key, shape)?;
    Ok(a)
}

fn conv(
    npz: &BTreeMap<String, Array>,
    conv: &str,
    bn: &str,
    cin: usize,
    cout: usize,
    stride: usize,
) -> Result<Conv> {
    let weight = get(
        npz,
        &format!("{conv}.weight"),
        &[Some(cout), Some(cin), Some(3), Some(3)],
    )?;
    let v = |k: &str| -> Result<Vec<f64>> {
        Ok(get(npz, &format!("{bn}.{k}"), &[Some(cout)])?.data.clone())
    };
    let (gamma, beta, mean, var) = (
        v("weight")?,
        v("bias")?,
        v("running_mean")?,
        v("running_var")?,
    );
    let factor: Vec<f64> = (0..cout)
        .map(|o| gamma[o] / (var[o] + BN_EPS).sqrt())
        .collect();
    let shift = (0..cout).map(|o| beta[o] - factor[o] * mean[o]).collect();
    Ok(Conv {
        cin,
        cout,
        stride,
        weight: weight.data.clone(),
        factor,
        shift,
    })
}

impl Model {
    /// Reads the weights from `dir`, checking every shape.
    pub fn load(dir: &Path) -> Result<Self> {
        let npz = read_npz(dir, WEIGHTS_FILE)?;
        let stem = conv(&npz, "conv1", "bn1", 3, 16, 1)?;
        let mut blocks = Vec::with_capacity(9);
        let mut cin = 16;
        for (s, cout) in [16, 32, 64].into_iter().enumerate() {
            for b in 0..3 {
                let stride = if s > 0 && b == 0 { 2 } else { 1 };
                let p = format!("layer{}.{b}", s + 1);
                blocks.push(Block {
                    conv1: conv(
                        &npz,
                        &format!("{p}.conv1"),
                        &format!("{p}.bn1"),
                        cin,
                        cout,
                        stride,
                    )?,
                    conv2: conv(
                        &npz,
                        &format!("{p}.conv2"),
                        &format!("{p}.bn2"),
                        cout,
                        cout,
                        1,
                    )?,
                });
                cin = cout;
            }
        }
        Ok(Self {
            stem,
            blocks,
            fc: get(&npz, "linear.weight", &[Some(CLASSES), Some(64)])?
                .data
                .clone(),
            fc_bias: get(&npz, "linear.bias", &[Some(CLASSES)])?.data.clone(),
        })
    }

    /// Every convolution in order (stem, then each block's two).
    pub fn convs(&self) -> impl Iterator<Item = &Conv> {
        std::iter::once(&self.stem).chain(self.blocks.iter().flat_map(|b| [&b.conv1, &b.conv2]))
    }

    /// A network of the same structure with fewer channels and blocks, for tests at small
    /// sizes: the first `channels[s]` channels of stage `s`'s weights and its first `blocks`
    /// blocks (a reduction of sizes, not of the algorithm: every layer type stays, the first
    /// block of stages 2 and 3 keeps its stride and downsampling shortcut). Option-A shortcuts
    /// need `channels[s + 1] = 2 channels[s]`.
    pub fn reduced(&self, channels: [usize; 3], blocks: usize) -> Result<Self> {
        if !(1..=3).contains(&blocks) {
            return Err(ProgramError::Invalid {
                name: "blocks per stage",
                value: blocks.to_string(),
                allowed: "1 to 3".into(),
            });
        }
        let full = [16, 32, 64];
        let ok = channels
            .iter()
            .zip(full)
            .all(|(&c, f)| (1..=f).contains(&c))
            && channels[1] == 2 * channels[0]
            && channels[2] == 2 * channels[1]
            && channels[0].is_multiple_of(2);
        if !ok {
            return Err(ProgramError::Invalid {
                name: "channels",
                value: format!("{channels:?}"),
                allowed: "[c, 2c, 4c] with c even, 2 <= c <= 16".into(),
            });
        }
        let cut = |c: &Conv, cin: usize, cout: usize| Conv {
            cin,
            cout,
            stride: c.stride,
            weight: (0..cout)
                .flat_map(|o| (0..cin).flat_map(move |i| (0..9).map(move |k| (o, i, k))))
                .map(|(o, i, k)| c.w(o, i, k / 3, k % 3))
                .collect(),
            factor: c.factor[..cout].to_vec(),
            shift: c.shift[..cout].to_vec(),
        };
        let mut cin = channels[0];
        let blocks = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 < blocks)
            .map(|(i, b)| {
                let cout = channels[i / 3];
                let r = Block {
                    conv1: cut(&b.conv1, cin, cout),
                    conv2: cut(&b.conv2, cout, cout),
                };
                cin = cout;
                r
            })
            .collect();
        let c3 = channels[2];
        Ok(Self {
            stem: cut(&self.stem, 3, channels[0]),
            blocks,
            fc: (0..CLASSES)
                .flat_map(|k| (0..c3).map(move |i| (k, i)))
                .map(|(k, i)| self.fc[k * 64 + i])
                .collect(),
            fc_bias: self.fc_bias.clone(),
        })
    }

    /// Channels after the network's last stage.
    pub fn last_channels(&self) -> usize {
        self.fc.len() / CLASSES
    }
}

/// The first `n` images of [`IMAGES_FILE`], normalised (`(x / 255 - mean) / std` per channel),
/// as `(3, 32, 32)` tensors in C order, and their labels.
pub fn images(dir: &Path, n: usize) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    images_from(dir, 0, n)
}

/// `n` images of the test set from index `first` (see [`images`]).
pub fn images_from(dir: &Path, first: usize, n: usize) -> Result<(Vec<Vec<f64>>, Vec<u8>)> {
    let npz = read_npz(dir, IMAGES_FILE)?;
    let images = member(&npz, IMAGES_FILE, "images")?;
    images.expect_shape(IMAGES_FILE, "images", &[None, Some(3), Some(32), Some(32)])?;
    let labels = member(&npz, IMAGES_FILE, "labels")?;
    labels.expect_shape(IMAGES_FILE, "labels", &[Some(images.shape[0])])?;
    let total = images.shape[0];
    if first >= total {
        return Err(ProgramError::Invalid {
            name: "first",
            value: first.to_string(),
            allowed: format!("0 to {} (the images of {IMAGES_FILE})", total - 1),
        });
    }
    if n == 0 || n > total - first {
        return Err(ProgramError::Invalid {
            name: "images",
            value: n.to_string(),
            allowed: format!(
                "1 to {} (the images of {IMAGES_FILE} from index {first})",
                total - first
            ),
        });
    }
    const PIX: usize = 3 * 32 * 32;
    let norm = |i: usize| -> Vec<f64> {
        images.data[i * PIX..(i + 1) * PIX]
            .iter()
            .enumerate()
            .map(|(j, &v)| {
                let c = j / 1024;
                (v / 255.0 - MEAN[c]) / STD[c]
            })
            .collect()
    };
    Ok((
        (first..first + n).map(norm).collect(),
        labels.data[first..first + n]
            .iter()
            .map(|&l| l as u8)
            .collect(),
    ))
}

/// The index of the largest value (the first on ties).
pub use crate::lola::model::argmax;
