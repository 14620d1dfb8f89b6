//! Which code tfhe-ntt 0.7 runs on this CPU, shared by the NTT benches (included with
//! `#[path]`, so each bench binary names its peer's kernel the same way).

/// The code tfhe-ntt's plans dispatch to here: IFMA (`prime64` below 2^51, `ifma` true), else
/// AVX-512 when built with its `avx512` feature (this crate's `tfhe-ntt-avx512`) and pulp's
/// `V4` features are present, else AVX2, else scalar.
pub fn peer_kernel(ifma: bool) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let v4 = has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl");
        if cfg!(feature = "tfhe-ntt-avx512") && v4 {
            return if ifma { "avx512-ifma" } else { "avx512" };
        }
        if has!("avx2") && has!("fma") {
            return "avx2";
        }
    }
    let _ = ifma;
    "scalar"
}
