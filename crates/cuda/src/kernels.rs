//! The CUDA C kernel sources (`kernels/*.cu`, compiled at run time by NVRTC, or by the host
//! C++ compiler for the emulator) and the signature of every kernel, so that one launch call
//! serves both executors and checks its argument count.

/// The sources in compilation order: the arithmetic header first.
pub(crate) const SOURCES: [(&str, &str); 5] = [
    ("modarith.cuh", include_str!("../kernels/modarith.cuh")),
    ("elementwise.cu", include_str!("../kernels/elementwise.cu")),
    ("ntt.cu", include_str!("../kernels/ntt.cu")),
    (
        "automorphism.cu",
        include_str!("../kernels/automorphism.cu"),
    ),
    ("bconv.cu", include_str!("../kernels/bconv.cu")),
];

/// The host emulator's prelude (thread indices and intrinsics for the host compiler).
pub(crate) const HOST_SHIM: &str = include_str!("../kernels/host_shim.h");

/// All sources as one translation unit.
pub(crate) fn translation_unit() -> String {
    let mut s = String::new();
    for (name, src) in SOURCES {
        s.push_str(&format!("// ---- {name}\n{src}\n"));
    }
    s
}

/// A kernel parameter: a device address or a 64-bit integer. Every kernel takes only these,
/// so a launch passes `&[u64]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    Ptr,
    U64,
}

/// A kernel's name and parameter list (must match its `.cu` definition).
#[derive(Debug)]
pub struct KernelSig {
    pub(crate) name: &'static str,
    pub(crate) params: &'static [Param],
}

use Param::{Ptr, U64};

macro_rules! kernels {
    ($($id:ident = $name:literal [$($p:ident),*];)*) => {
        $(
            #[doc = concat!("The `", $name, "` kernel.")]
            pub(crate) const $id: KernelSig = KernelSig { name: $name, params: &[$($p),*] };
        )*
        /// Every kernel.
        pub(crate) const ALL: &[&KernelSig] = &[$(&$id),*];
    };
}

kernels! {
    EW_ADD = "ew_add" [Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_SUB = "ew_sub" [Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_NEG = "ew_neg" [Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_MUL = "ew_mul" [Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_MUL_ACC = "ew_mul_acc" [Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_DOT8 = "ew_dot8" [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64, Ptr, Ptr, U64, U64];
    EW_MUL_CONST = "ew_mul_const" [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_ADD_CONST = "ew_add_const" [Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_LIFT_CENTERED = "ew_lift_centered" [Ptr, Ptr, U64, Ptr, Ptr, U64, U64];
    NTT_TILE_FWD = "ntt_tile_fwd" [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64, U64, U64, U64];
    NTT_TILE_INV = "ntt_tile_inv" [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64, U64, U64, U64];
    AUTO_EVAL = "auto_eval" [Ptr, Ptr, Ptr, U64, U64];
    AUTO_COEFF = "auto_coeff" [Ptr, Ptr, U64, Ptr, Ptr, U64, U64];
    BCONV_SCALE = "bconv_scale" [Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, U64, U64];
    BCONV_MAC = "bconv_mac" [Ptr, Ptr, U64, Ptr, Ptr, Ptr, Ptr, U64, Ptr, Ptr, U64, U64];
}

/// Threads per block of every launch.
pub(crate) const BLOCK: u32 = 256;

/// Output limbs one `bconv_mac` thread computes by default (`BCONV_J` in `kernels/bconv.cu`).
pub(crate) const BCONV_OUTPUTS_PER_THREAD: usize = 4;

/// The output limbs per `bconv_mac` thread that NVRTC `options` select: the last
/// `-DBCONV_J=n` (1 to 8), else [`BCONV_OUTPUTS_PER_THREAD`]. The launch must use the value
/// the kernel was compiled with, so the knob is read here from the same options.
///
/// Errors name the option and the allowed range.
pub(crate) fn bconv_outputs_per_thread(options: &[String]) -> Result<usize, String> {
    let Some(v) = options
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix("-DBCONV_J="))
    else {
        return Ok(BCONV_OUTPUTS_PER_THREAD);
    };
    match v.parse::<usize>() {
        Ok(j) if (1..=8).contains(&j) => Ok(j),
        _ => Err(format!(
            "-DBCONV_J={v}: output limbs per BConv thread must be an integer from 1 to 8"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launch and the kernel agree on how many output limbs a BConv thread computes.
    #[test]
    fn bconv_outputs_per_thread_matches_the_source() {
        let def = format!("#define BCONV_J {BCONV_OUTPUTS_PER_THREAD}\n");
        assert!(translation_unit().contains(&def));
    }

    /// The knob is read from the options, the last one wins, and bad values are refused.
    #[test]
    fn bconv_outputs_per_thread_from_options() {
        let o = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(bconv_outputs_per_thread(&o(&[])), Ok(4));
        assert_eq!(bconv_outputs_per_thread(&o(&["-DBCONV_J=2"])), Ok(2));
        assert_eq!(
            bconv_outputs_per_thread(&o(&["-DBCONV_J=2", "-DBCONV_J=8"])),
            Ok(8)
        );
        for bad in ["-DBCONV_J=0", "-DBCONV_J=9", "-DBCONV_J=x", "-DBCONV_J="] {
            let e = bconv_outputs_per_thread(&o(&[bad])).unwrap_err();
            assert!(e.contains("1 to 8"), "{e}");
        }
    }

    /// Each signature names a kernel defined in the sources with as many parameters.
    #[test]
    fn signatures_match_sources() {
        let tu = translation_unit();
        for k in ALL {
            // `__global__ void [__launch_bounds__(..)] name(`
            let head = format!(" {}(", k.name);
            let at = tu
                .match_indices(&head)
                .map(|(i, _)| i)
                .find(|&i| {
                    let line = &tu[tu[..i].rfind('\n').map_or(0, |j| j + 1)..i];
                    line.contains("__global__ void")
                })
                .unwrap_or_else(|| panic!("{} not defined", k.name));
            let rest = &tu[at + head.len()..];
            let params = &rest[..rest.find(')').expect("closing parenthesis")];
            assert_eq!(params.split(',').count(), k.params.len(), "{}", k.name);
            for (p, sig) in params.split(',').zip(k.params) {
                assert_eq!(p.contains('*'), *sig == Param::Ptr, "{}: {p}", k.name);
            }
        }
    }
}
