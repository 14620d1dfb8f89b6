//! The CUDA C kernel sources (`kernels/*.cu`, compiled at run time by NVRTC, or by the host
//! C++ compiler for the emulator) and the signature of every kernel, so that one launch call
//! serves both executors and checks its argument count.

/// The arithmetic header (both word sizes).
pub(crate) const HEADERS: [(&str, &str); 1] =
    [("modarith.cuh", include_str!("../kernels/modarith.cuh"))];

/// The kernel sources, written over the polynomial word `word` with each kernel named
/// `K(name)`: compiled twice, for 64-bit words (`name`) and 32-bit words (`name_w32`).
pub(crate) const SOURCES: [(&str, &str); 4] = [
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

/// Suffix of the 32-bit-word kernels' names.
pub(crate) const W32_SUFFIX: &str = "_w32";

/// All sources as one translation unit: the headers, then the kernels once per word size
/// (`word` and `K` defined as macros around each copy).
pub(crate) fn translation_unit() -> String {
    let mut s = String::new();
    for (name, src) in HEADERS {
        s.push_str(&format!("// ---- {name}\n{src}\n"));
    }
    for (word, name) in [("u64", "name"), ("u32", &format!("name##{W32_SUFFIX}"))] {
        s.push_str(&format!(
            "// ==== kernels on {word} words\n#define word {word}\n#define K(name) {name}\n"
        ));
        for (name, src) in SOURCES {
            s.push_str(&format!("// ---- {name} ({word})\n{src}\n"));
        }
        s.push_str("#undef K\n#undef word\n");
    }
    s
}

/// A kernel parameter: a device address of polynomial words (`word*`: 64 or 32 bits by the
/// kernel's variant), a device address of 64-bit words (tables), or a 64-bit integer. Every
/// kernel takes only these, so a launch passes `&[u64]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    Data,
    Ptr,
    U64,
}

/// A kernel's name, word size and parameter list (must match its `.cu` definition).
#[derive(Debug)]
pub struct KernelSig {
    pub(crate) name: &'static str,
    /// Whether its polynomial words are 32-bit (the `_w32` variant).
    pub(crate) w32: bool,
    pub(crate) params: &'static [Param],
}

/// A kernel in both variants: over 64-bit and over 32-bit polynomial words.
#[derive(Debug)]
pub struct Kernel {
    pub(crate) w64: KernelSig,
    pub(crate) w32: KernelSig,
}

impl Kernel {
    /// The variant for polynomials of 32-bit (`w32`) or 64-bit words.
    pub(crate) fn variant(&self, w32: bool) -> &KernelSig {
        if w32 {
            &self.w32
        } else {
            &self.w64
        }
    }
}

use Param::{Data, Ptr, U64};

macro_rules! kernels {
    ($($id:ident = $name:literal [$($p:ident),*];)*) => {
        $(
            #[doc = concat!("The `", $name, "` kernel (and its 32-bit-word variant).")]
            pub(crate) const $id: Kernel = Kernel {
                w64: KernelSig { name: $name, w32: false, params: &[$($p),*] },
                w32: KernelSig { name: concat!($name, "_w32"), w32: true, params: &[$($p),*] },
            };
        )*
        /// Every kernel, both variants.
        pub(crate) const ALL: &[&KernelSig] = &[$(&$id.w64, &$id.w32),*];
    };
}

kernels! {
    EW_ADD = "ew_add" [Data, Data, Data, Ptr, Ptr, U64, U64];
    EW_SUB = "ew_sub" [Data, Data, Data, Ptr, Ptr, U64, U64];
    EW_NEG = "ew_neg" [Data, Data, Ptr, Ptr, U64, U64];
    EW_MUL = "ew_mul" [Data, Data, Data, Ptr, Ptr, U64, U64];
    EW_MUL_ACC = "ew_mul_acc" [Data, Data, Data, Ptr, Ptr, U64, U64];
    EW_DOT8 = "ew_dot8" [Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, U64, U64, Ptr, Ptr, U64, U64];
    EW_MUL_CONST = "ew_mul_const" [Data, Data, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_ADD_CONST = "ew_add_const" [Data, Data, Ptr, Ptr, Ptr, U64, U64];
    EW_SUB_MUL_CONST = "ew_sub_mul_const" [Data, Data, Data, Ptr, Ptr, Ptr, Ptr, U64, U64];
    EW_DOT_PAIR4 = "ew_dot_pair4" [Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, Data, U64, U64, Ptr, Ptr, U64, U64];
    EW_LIFT_CENTERED = "ew_lift_centered" [Data, Data, U64, Ptr, Ptr, U64, U64];
    NTT_TILE_FWD = "ntt_tile_fwd" [Data, Data, Data, Ptr, Ptr, Ptr, Ptr, U64, U64, U64, U64, U64];
    NTT_TILE_INV = "ntt_tile_inv" [Data, Data, Data, Ptr, Ptr, Ptr, Ptr, U64, U64, U64, U64, U64];
    AUTO_EVAL = "auto_eval" [Data, Data, Ptr, U64, U64];
    AUTO_COEFF = "auto_coeff" [Data, Data, U64, Ptr, Ptr, U64, U64];
    BCONV_SCALE = "bconv_scale" [Data, Data, Ptr, Ptr, Ptr, Ptr, U64, U64];
    BCONV_MAC = "bconv_mac" [Data, Data, U64, Ptr, Ptr, Ptr, Ptr, U64, Ptr, Ptr, U64, U64];
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

    /// Each signature names a kernel defined in the sources with as many parameters, its
    /// polynomial pointers (`word*`) where the signature has `Data`.
    #[test]
    fn signatures_match_sources() {
        let tu = translation_unit();
        for k in ALL {
            // `__global__ void [__launch_bounds__(..)] K(name)(`
            let base = k.name.strip_suffix(W32_SUFFIX).unwrap_or(k.name);
            assert_eq!(k.w32, base != k.name, "{}", k.name);
            let head = format!(" K({base})(");
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
                assert_eq!(p.contains('*'), *sig != Param::U64, "{}: {p}", k.name);
                assert_eq!(p.contains("word*"), *sig == Param::Data, "{}: {p}", k.name);
            }
        }
    }
}
