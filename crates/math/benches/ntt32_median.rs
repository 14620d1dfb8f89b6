//! 32-bit against 64-bit words at N = 2^16, per kernel (issue 22 item 3): is a 60-bit modulus
//! cheaper as two 30-bit limbs (two `NttPlan32` transforms, two element-wise products) or as
//! one 60-bit limb (one `NttPlan`)? One process runs every kernel this CPU has (scalar, avx2,
//! avx512; chosen per call with `forward_with`, so `TESSERA_SIMD` is not needed), alternating
//! single calls for `REPS` rounds and printing medians and minima, with tfhe-ntt 0.7's
//! `prime32::Plan` (30-bit, two transforms) and `prime64::Plan` (60-bit) in the same rounds.
//!
//! Also one BConv row at ark's digit size (6 x 60-bit inputs to one 60-bit limb, against
//! 12 x 30-bit inputs to two 30-bit limbs), outside the `word-size` sums.
//!
//! Each line: `bench` (operation/word layout/library), `kernel`, `cpu` (model name, family,
//! model), `median_us`, `min_us`, `reps`. The peers' kernel follows `peer_kernel` (build with
//! `--features tfhe-ntt-avx512` for its AVX-512 code). tfhe-ntt's inverse leaves out the 1/N
//! scaling; ours includes it.
//!
//! Run: `cargo bench -p tessera-math --bench ntt32_median [--features tfhe-ntt-avx512]`.

#[path = "common/peer_kernel.rs"]
mod peer;

use std::hint::black_box;
use std::time::Instant;
use tessera_math::primes::generate_ntt_primes;
use tessera_math::word32::{self, generate_ntt_primes32, Modulus32, NttPlan32};
use tessera_math::{ntt, pointwise, AlignedVec, Kernel, Modulus, NttPlan};

const REPS: usize = 301;

/// `n` words starting on a 64-byte line, as `AlignedVec` gives the 64-bit limbs.
struct Aligned32 {
    buf: Vec<u32>,
    at: usize,
}

impl Aligned32 {
    fn new(words: &[u32]) -> Self {
        let mut buf = vec![0u32; words.len() + 16];
        let at = buf.as_ptr().align_offset(64);
        buf[at..at + words.len()].copy_from_slice(words);
        Self { buf, at }
    }
    fn get(&mut self, n: usize) -> &mut [u32] {
        &mut self.buf[self.at..self.at + n]
    }
}

fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(k))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    format!(
        "{} (family {}, model {})",
        field("model name"),
        field("cpu family"),
        field("model")
    )
}

fn time(f: &mut dyn FnMut()) -> f64 {
    let s = Instant::now();
    f();
    s.elapsed().as_secs_f64()
}

fn main() {
    let n = 1usize << 16;
    let q64 = generate_ntt_primes(60, n, 1, &[]).unwrap()[0];
    let q32 = generate_ntt_primes32(30, n, 2, &[]).unwrap();
    let p64 = NttPlan::new(n, q64).unwrap();
    let p32: Vec<NttPlan32> = q32
        .iter()
        .map(|&q| NttPlan32::new(n, q as u64).unwrap())
        .collect();
    let m64 = Modulus::new(q64).unwrap();
    let m32: Vec<Modulus32> = q32
        .iter()
        .map(|&q| Modulus32::new(q as u64).unwrap())
        .collect();
    let peer64 = tfhe_ntt::prime64::Plan::try_new(n, q64).unwrap();
    let peer32: Vec<_> = q32
        .iter()
        .map(|&q| tfhe_ntt::prime32::Plan::try_new(n, q).unwrap())
        .collect();
    let words64 = |salt: u64| -> Vec<u64> {
        (0..n as u64)
            .map(|i| (i ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) % q64)
            .collect()
    };
    let words32 = |salt: u64, q: u32| -> Vec<u32> {
        (0..n as u64)
            .map(|i| ((i ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) % q as u64) as u32)
            .collect()
    };
    let kernels: Vec<Kernel> = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512]
        .into_iter()
        .filter(|k| k.cpu_supports())
        .collect();

    // Buffers: one 60-bit limb, two 30-bit limbs, and a second operand of each for products.
    let mut a64 = AlignedVec::from(words64(1));
    let b64 = AlignedVec::from(words64(2));
    let mut a32: Vec<Aligned32> = q32
        .iter()
        .map(|&q| Aligned32::new(&words32(1, q)))
        .collect();
    let mut b32: Vec<Aligned32> = q32
        .iter()
        .map(|&q| Aligned32::new(&words32(2, q)))
        .collect();
    let mut peer_a64 = words64(3);
    let mut peer_a32: Vec<Vec<u32>> = q32.iter().map(|&q| words32(3, q)).collect();

    // A BConv row at ark's digit size (alpha = 6 limbs of 60 bits): one 60-bit output limb
    // from 6 inputs, against two 30-bit output limbs from the same modulus as 12 inputs.
    let ys64: Vec<AlignedVec> = (0..6).map(|i| AlignedVec::from(words64(10 + i))).collect();
    let c64: Vec<u64> = (0..6).map(|i| (i + 3) * 0x1234_5678_9abc % q64).collect();
    let cs64: Vec<u64> = c64.iter().map(|&c| m64.shoup(c)).collect();
    let ys32: Vec<Aligned32> = (0..12)
        .map(|i| Aligned32::new(&words32(10 + i, q32[i as usize % 2])))
        .collect();
    let c32: Vec<Vec<u32>> = q32
        .iter()
        .map(|&q| {
            (0..12u64)
                .map(|i| ((i + 3) * 0x1234_5678 % q as u64) as u32)
                .collect()
        })
        .collect();
    let mut out64 = AlignedVec::from(vec![0u64; n]);
    let mut out32: Vec<Aligned32> = (0..2).map(|_| Aligned32::new(&vec![0u32; n])).collect();

    // (name, kernel, samples); each round runs every entry once, in this order.
    let mut rows: Vec<(String, &'static str, Vec<f64>)> = Vec::new();
    for &k in &kernels {
        for name in [
            "forward/1x60-bit/tessera",
            "forward/1x30-bit/tessera",
            "forward/2x30-bit/tessera",
            "inverse/1x60-bit/tessera",
            "inverse/2x30-bit/tessera",
            "mul/1x60-bit/tessera",
            "mul/2x30-bit/tessera",
            "bconv/6x60-to-1x60-bit/tessera",
            "bconv/12x30-to-2x30-bit/tessera",
        ] {
            rows.push((name.into(), k.name(), Vec::with_capacity(REPS)));
        }
    }
    let pk = peer::peer_kernel(peer64.use_ifma());
    let pk32 = peer::peer_kernel(false);
    for (name, k) in [
        ("forward/1x60-bit/tfhe-ntt", pk),
        ("forward/2x30-bit/tfhe-ntt", pk32),
        ("inverse/1x60-bit/tfhe-ntt", pk),
        ("inverse/2x30-bit/tfhe-ntt", pk32),
    ] {
        rows.push((name.into(), k, Vec::with_capacity(REPS)));
    }

    for _ in 0..REPS {
        let mut r = 0;
        let mut record = |rows: &mut Vec<(String, &'static str, Vec<f64>)>, t: f64| {
            rows[r].2.push(t);
            r += 1;
        };
        for &k in &kernels {
            let t = time(&mut || p64.forward_with(k, black_box(&mut a64)).unwrap());
            record(&mut rows, t);
            let t = time(&mut || p32[0].forward_with(k, black_box(a32[0].get(n))).unwrap());
            record(&mut rows, t);
            let t = time(&mut || {
                for (p, a) in p32.iter().zip(a32.iter_mut()) {
                    p.forward_with(k, black_box(a.get(n))).unwrap();
                }
            });
            record(&mut rows, t);
            let t = time(&mut || p64.inverse_with(k, black_box(&mut a64)).unwrap());
            record(&mut rows, t);
            let t = time(&mut || {
                for (p, a) in p32.iter().zip(a32.iter_mut()) {
                    p.inverse_with(k, black_box(a.get(n))).unwrap();
                }
            });
            record(&mut rows, t);
            let t = time(&mut || pointwise::mul_row(k, &m64, black_box(&mut a64), &b64).unwrap());
            record(&mut rows, t);
            let t = time(&mut || {
                for (i, m) in m32.iter().enumerate() {
                    let (a, b) = (&mut a32[i], &mut b32[i]);
                    let b = b.get(n);
                    word32::pointwise::mul(Some(k), m, black_box(a.get(n)), b).unwrap();
                }
            });
            record(&mut rows, t);
            let t = time(&mut || {
                let ys: Vec<&[u64]> = ys64.iter().map(|y| &y[..]).collect();
                ntt::mac_shoup_row(Some(k), &ys, &c64, &cs64, q64, black_box(&mut out64)).unwrap();
            });
            record(&mut rows, t);
            let t = time(&mut || {
                let ys: Vec<&[u32]> = ys32.iter().map(|y| &y.buf[y.at..y.at + n]).collect();
                for (j, m) in m32.iter().enumerate() {
                    let out = black_box(out32[j].get(n));
                    word32::bconv::mac_row_u32(Some(k), &ys, &c32[j], m, out).unwrap();
                }
            });
            record(&mut rows, t);
        }
        let t = time(&mut || peer64.fwd(black_box(&mut peer_a64)));
        record(&mut rows, t);
        let t = time(&mut || {
            for (p, a) in peer32.iter().zip(peer_a32.iter_mut()) {
                p.fwd(black_box(a));
            }
        });
        record(&mut rows, t);
        let t = time(&mut || peer64.inv(black_box(&mut peer_a64)));
        record(&mut rows, t);
        let t = time(&mut || {
            for (p, a) in peer32.iter().zip(peer_a32.iter_mut()) {
                p.inv(black_box(a));
            }
        });
        record(&mut rows, t);
    }
    let cpu = cpu_model();
    let mut minima = Vec::new();
    for (name, kernel, mut v) in rows {
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2] * 1e6;
        println!(
            "{{\"bench\":\"ntt32_median/N=2^16/{name}\",\"kernel\":\"{kernel}\",\"cpu\":\"{cpu}\",\"median_us\":{median:.2},\"min_us\":{:.2},\"reps\":{REPS}}}",
            v[0] * 1e6
        );
        minima.push((name, kernel, v[0] * 1e6));
    }
    // The faster word size per kernel for a 60-bit modulus: one 60-bit limb against two
    // 30-bit limbs, forward plus inverse plus one element-wise product. Minima, not medians:
    // on a loaded host the medians of neighbouring rows absorb different preemptions.
    for &k in &kernels {
        let cost = |layout: &str| -> f64 {
            minima
                .iter()
                .filter(|(name, kernel, _)| {
                    *kernel == k.name()
                        && name.ends_with("/tessera")
                        && name.contains(layout)
                        && !name.starts_with("forward/1x30")
                })
                .map(|(_, _, m)| m)
                .sum()
        };
        let (w64, w32) = (cost("/1x60-bit/"), cost("/2x30-bit/"));
        println!(
            "{{\"bench\":\"ntt32_median/N=2^16/word-size\",\"kernel\":\"{}\",\"cpu\":\"{cpu}\",\"us_64\":{w64:.2},\"us_2x32\":{w32:.2},\"speedup_32\":{:.3},\"faster\":\"{}\"}}",
            k.name(),
            w64 / w32,
            if w32 < w64 { "32-bit" } else { "64-bit" }
        );
    }
}
