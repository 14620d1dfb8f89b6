//! The plaintext replica of ResNet-20, tensor by tensor, in f64: the reference every packed
//! and encrypted version is compared with.
//!
//! The activation is either the exact ReLU (the float network, a check of the loader) or
//! AppReLU `x (1 + p(x / B)) / 2` with `p` the composite minimax sign of
//! `CompositeSign::lee_relu()` and `B` = [`BOUND`] (the arithmetic the encrypted network
//! does). Convolutions apply BatchNorm as the encrypted network does: the raw sum, times the
//! factor, plus the shift ([`super::model::Conv`]).

use super::model::{Block, Conv, Model, CLASSES};
use crate::error::Result;
use tessera_ckks::circuits::sign::CompositeSign;

/// Lee et al.'s AppReLU input bound (workloads.md 3.5): the network's pre-activations lie in
/// `[-B, B]` (the largest on our images is 27.1).
pub const BOUND: f64 = 40.0;

/// A `(c, h, w)` tensor in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Channels.
    pub c: usize,
    /// Height.
    pub h: usize,
    /// Width.
    pub w: usize,
    /// Values, `data[(ch * h + y) * w + x]`.
    pub data: Vec<f64>,
}

impl Tensor {
    /// Zeros.
    pub fn zeros(c: usize, h: usize, w: usize) -> Self {
        Self {
            c,
            h,
            w,
            data: vec![0.0; c * h * w],
        }
    }

    /// The value at `(ch, y, x)`.
    pub fn at(&self, ch: usize, y: usize, x: usize) -> f64 {
        self.data[(ch * self.h + y) * self.w + x]
    }

    fn at_mut(&mut self, ch: usize, y: usize, x: usize) -> &mut f64 {
        &mut self.data[(ch * self.h + y) * self.w + x]
    }

    /// The largest magnitude.
    pub fn max_abs(&self) -> f64 {
        self.data.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// The activation the replica applies.
#[derive(Clone, Copy, Debug)]
pub enum Activation<'a> {
    /// `max(x, 0)`: the float network.
    Relu,
    /// AppReLU with this composite sign and bound.
    App(&'a CompositeSign, f64),
}

impl Activation<'_> {
    /// The activation of one value.
    pub fn apply(&self, x: f64) -> f64 {
        match self {
            Activation::Relu => x.max(0.0),
            Activation::App(s, b) => s.app_relu_plain(x, *b),
        }
    }
}

/// Lee et al.'s AppReLU: `lee_relu()` with `B = 40`.
pub fn app_relu() -> Result<Activation<'static>> {
    Ok(Activation::App(CompositeSign::lee_relu()?, BOUND))
}

/// A 3x3 convolution, padding 1, the conv's stride, then BatchNorm (`factor * sum + shift`).
pub fn conv(x: &Tensor, k: &Conv) -> Tensor {
    assert_eq!(x.c, k.cin, "input channels");
    let (h, w) = (x.h / k.stride, x.w / k.stride);
    let mut out = Tensor::zeros(k.cout, h, w);
    for o in 0..k.cout {
        for y in 0..h {
            for xx in 0..w {
                let mut s = 0.0;
                for i in 0..k.cin {
                    for dy in 0..3 {
                        for dx in 0..3 {
                            let (sy, sx) = (
                                (y * k.stride + dy) as isize - 1,
                                (xx * k.stride + dx) as isize - 1,
                            );
                            if sy >= 0 && sx >= 0 && (sy as usize) < x.h && (sx as usize) < x.w {
                                s += k.w(o, i, dy, dx) * x.at(i, sy as usize, sx as usize);
                            }
                        }
                    }
                }
                *out.at_mut(o, y, xx) = k.factor[o] * s + k.shift[o];
            }
        }
    }
    out
}

/// Option-A shortcut to `cout` channels: rows and columns subsampled by `stride`, the
/// channels zero-padded by `(cout - c) / 2` on each side.
pub fn shortcut(x: &Tensor, cout: usize, stride: usize) -> Tensor {
    let pad = (cout - x.c) / 2;
    let (h, w) = (x.h / stride, x.w / stride);
    let mut out = Tensor::zeros(cout, h, w);
    for c in 0..x.c {
        for y in 0..h {
            for xx in 0..w {
                *out.at_mut(c + pad, y, xx) = x.at(c, y * stride, xx * stride);
            }
        }
    }
    out
}

/// The activation on every value.
pub fn activate(x: &Tensor, act: Activation) -> Tensor {
    Tensor {
        data: x.data.iter().map(|&v| act.apply(v)).collect(),
        ..x.clone()
    }
}

/// Global average pooling: one value per channel.
pub fn avg_pool(x: &Tensor) -> Vec<f64> {
    let hw = x.h * x.w;
    (0..x.c)
        .map(|c| x.data[c * hw..(c + 1) * hw].iter().sum::<f64>() / hw as f64)
        .collect()
}

/// The fully connected layer: `fc v + bias`.
pub fn fc(model: &Model, v: &[f64]) -> Vec<f64> {
    let c = model.last_channels();
    (0..CLASSES)
        .map(|k| (0..c).map(|i| model.fc[k * c + i] * v[i]).sum::<f64>() + model.fc_bias[k])
        .collect()
}

/// One basic block: `act(BN2(conv2(act(BN1(conv1(x))))) + shortcut(x))`; `pre` collects the
/// largest pre-activation magnitude.
pub fn block(x: &Tensor, b: &Block, act: Activation, pre: &mut f64) -> Tensor {
    let y = conv(x, &b.conv1);
    *pre = pre.max(y.max_abs());
    let y = activate(&y, act);
    let mut y = conv(&y, &b.conv2);
    let s = if b.downsamples() {
        shortcut(x, b.conv1.cout, b.conv1.stride)
    } else {
        x.clone()
    };
    for (a, s) in y.data.iter_mut().zip(&s.data) {
        *a += s;
    }
    *pre = pre.max(y.max_abs());
    activate(&y, act)
}

/// The logits of `image` (a normalised `(3, h, w)` tensor) and the largest pre-activation
/// magnitude met.
pub fn forward(model: &Model, image: &Tensor, act: Activation) -> (Vec<f64>, f64) {
    let mut pre = 0.0f64;
    let y = conv(image, &model.stem);
    pre = pre.max(y.max_abs());
    let mut y = activate(&y, act);
    for b in &model.blocks {
        y = block(&y, b, act, &mut pre);
    }
    (fc(model, &avg_pool(&y)), pre)
}

/// A `(3, 32, 32)` image (normalised, from [`super::model::images`]) as a tensor; with
/// `side < 32`, its top-left `side x side` crop (tests at small sizes).
pub fn image_tensor(image: &[f64], side: usize) -> Tensor {
    let mut t = Tensor::zeros(3, side, side);
    for c in 0..3 {
        for y in 0..side {
            for x in 0..side {
                *t.at_mut(c, y, x) = image[(c * 32 + y) * 32 + x];
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_conv(
        cin: usize,
        cout: usize,
        stride: usize,
        f: impl Fn(usize, usize, usize, usize) -> f64,
    ) -> Conv {
        Conv {
            cin,
            cout,
            stride,
            weight: (0..cout * cin * 9)
                .map(|j| f(j / (cin * 9), (j / 9) % cin, (j % 9) / 3, j % 3))
                .collect(),
            factor: vec![1.0; cout],
            shift: vec![0.0; cout],
        }
    }

    #[test]
    fn identity_kernel_and_padding() {
        let x = Tensor {
            c: 1,
            h: 3,
            w: 3,
            data: (1..=9).map(f64::from).collect(),
        };
        // Centre tap only: the identity.
        let id = unit_conv(1, 1, 1, |_, _, dy, dx| {
            f64::from(u8::from(dy == 1 && dx == 1))
        });
        assert_eq!(conv(&x, &id), x);
        // Top-left tap: output (y, x) reads input (y - 1, x - 1), zero outside.
        let tl = unit_conv(1, 1, 1, |_, _, dy, dx| {
            f64::from(u8::from(dy == 0 && dx == 0))
        });
        assert_eq!(
            conv(&x, &tl).data,
            vec![0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 4.0, 5.0]
        );
        // All ones, stride 2 on 4 x 4: output (0, 0) sums the 2 x 2 top-left corner.
        let x = Tensor {
            c: 1,
            h: 4,
            w: 4,
            data: (0..16).map(f64::from).collect(),
        };
        let ones = unit_conv(1, 1, 2, |_, _, _, _| 1.0);
        let y = conv(&x, &ones);
        assert_eq!((y.h, y.w), (2, 2));
        assert_eq!(y.at(0, 0, 0), 0.0 + 1.0 + 4.0 + 5.0);
        assert_eq!(
            y.at(0, 1, 1),
            (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) as f64
        );
    }

    #[test]
    fn batchnorm_is_factor_then_shift() {
        let x = Tensor {
            c: 1,
            h: 1,
            w: 1,
            data: vec![2.0],
        };
        let mut k = unit_conv(1, 2, 1, |o, _, dy, dx| {
            if dy == 1 && dx == 1 {
                (o + 1) as f64
            } else {
                0.0
            }
        });
        k.factor = vec![0.5, 3.0];
        k.shift = vec![1.0, -1.0];
        assert_eq!(conv(&x, &k).data, vec![0.5 * 2.0 + 1.0, 3.0 * 4.0 - 1.0]);
    }

    #[test]
    fn option_a_shortcut_subsamples_and_pads() {
        let x = Tensor {
            c: 2,
            h: 4,
            w: 4,
            data: (0..32).map(f64::from).collect(),
        };
        let s = shortcut(&x, 4, 2);
        assert_eq!((s.c, s.h, s.w), (4, 2, 2));
        assert!(s.data[..4].iter().chain(&s.data[12..]).all(|&v| v == 0.0));
        assert_eq!(s.at(1, 0, 1), x.at(0, 0, 2));
        assert_eq!(s.at(2, 1, 1), x.at(1, 2, 2));
    }

    #[test]
    fn app_relu_is_close_to_relu_on_the_bound() {
        let a = app_relu().unwrap();
        for i in -40..=40 {
            let x = i as f64;
            assert!(
                (a.apply(x) - x.max(0.0)).abs() < 1e-2 * 40.0 / 8.0,
                "{x}: {}",
                a.apply(x)
            );
        }
        assert_eq!(Activation::Relu.apply(-1.0), 0.0);
    }
}
