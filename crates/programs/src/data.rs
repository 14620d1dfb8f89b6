//! Reading the real data the programs need (shared/data/README.md): where the data directory
//! is, `.npz` archives of `.npy` arrays, and CSV tables of numbers.
//!
//! A `.npz` file is a zip archive of `.npy` members, stored or deflated. The reader here takes
//! the members' sizes and offsets from the zip's central directory (numpy writes ZIP64 local
//! headers whose sizes are placeholders) and inflates with `miniz_oxide`. `.npy` arrays of
//! little-endian `u8`, `i64`, `f32` and `f64` in C order are supported, which is what the
//! data files hold; anything else is a typed error naming the file.

use crate::error::{ProgramError, Result};
use std::path::{Path, PathBuf};

/// Environment variable naming the data directory.
pub const DATA_ENV: &str = "TESSERA_DATA";

/// The data directory: `explicit` if given, else `$TESSERA_DATA`, else `../shared/data`
/// relative to the repository root (the layout of the project's checkout).
pub fn data_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os(DATA_ENV) {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

/// Reads `dir/file`, or a [`ProgramError::Data`] naming the file and the directory.
pub fn read_file(dir: &Path, file: &str) -> Result<Vec<u8>> {
    std::fs::read(dir.join(file)).map_err(|e| ProgramError::Data {
        file: file.to_string(),
        dir: dir.display().to_string(),
        message: e.to_string(),
    })
}

/// An n-dimensional array read from a `.npy` member, converted to `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The shape (C order).
    pub shape: Vec<usize>,
    /// The values in C order.
    pub data: Vec<f64>,
}

impl Array {
    /// Checks the shape; `None` in `expect` accepts any size on that axis.
    pub fn expect_shape(&self, file: &str, what: &str, expect: &[Option<usize>]) -> Result<()> {
        let ok = self.shape.len() == expect.len()
            && self
                .shape
                .iter()
                .zip(expect)
                .all(|(&s, e)| e.is_none_or(|e| e == s));
        if ok {
            return Ok(());
        }
        let want: Vec<String> = expect
            .iter()
            .map(|e| e.map_or("*".into(), |e| e.to_string()))
            .collect();
        Err(ProgramError::Shape {
            file: file.to_string(),
            message: format!(
                "{what} has shape {:?}, expected ({})",
                self.shape,
                want.join(", ")
            ),
        })
    }
}

fn shape_err(file: &str, message: impl Into<String>) -> ProgramError {
    ProgramError::Shape {
        file: file.to_string(),
        message: message.into(),
    }
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// The members of a zip archive: `(name, bytes)` in central-directory order.
pub fn unzip(file: &str, zip: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let bad = |m: &str| shape_err(file, format!("not a readable zip archive: {m}"));
    // End of central directory: the last "PK\x05\x06" (a comment may follow it).
    let eocd = (0..zip.len().saturating_sub(21))
        .rev()
        .find(|&i| zip[i..].starts_with(b"PK\x05\x06"))
        .ok_or_else(|| bad("no end-of-central-directory record"))?;
    let count = u16_at(zip, eocd + 10).ok_or_else(|| bad("truncated"))? as usize;
    let mut at = u32_at(zip, eocd + 16).ok_or_else(|| bad("truncated"))? as usize;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if !zip.get(at..).is_some_and(|s| s.starts_with(b"PK\x01\x02")) {
            return Err(bad("bad central-directory entry"));
        }
        let field = |o: usize| u32_at(zip, at + o).ok_or_else(|| bad("truncated"));
        let method = u16_at(zip, at + 10).ok_or_else(|| bad("truncated"))?;
        let mut csize = field(20)? as u64;
        let mut usize_ = field(24)? as u64;
        let name_len = u16_at(zip, at + 28).ok_or_else(|| bad("truncated"))? as usize;
        let extra_len = u16_at(zip, at + 30).ok_or_else(|| bad("truncated"))? as usize;
        let comment_len = u16_at(zip, at + 32).ok_or_else(|| bad("truncated"))? as usize;
        let mut offset = field(42)? as u64;
        let name_bytes = zip
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| bad("truncated"))?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        // ZIP64 extra field: the 64-bit values of the fields set to 0xFFFFFFFF, in order.
        let extra = zip
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or_else(|| bad("truncated"))?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e).unwrap_or(0);
            let len = u16_at(extra, e + 2).unwrap_or(0) as usize;
            if id == 1 {
                let mut k = e + 4;
                for v in [&mut usize_, &mut csize, &mut offset] {
                    if *v == 0xFFFF_FFFF {
                        *v = u64_at(extra, k).ok_or_else(|| bad("truncated ZIP64 field"))?;
                        k += 8;
                    }
                }
            }
            e += 4 + len;
        }
        let lo = offset as usize;
        if !zip.get(lo..).is_some_and(|s| s.starts_with(b"PK\x03\x04")) {
            return Err(bad("bad local header"));
        }
        let lname = u16_at(zip, lo + 26).ok_or_else(|| bad("truncated"))? as usize;
        let lextra = u16_at(zip, lo + 28).ok_or_else(|| bad("truncated"))? as usize;
        let start = lo + 30 + lname + lextra;
        let raw = zip
            .get(start..start + csize as usize)
            .ok_or_else(|| bad("member runs past the end"))?;
        let bytes = match method {
            0 => raw.to_vec(),
            8 => miniz_oxide::inflate::decompress_to_vec(raw)
                .map_err(|e| bad(&format!("{name}: inflate failed ({e:?})")))?,
            m => {
                return Err(bad(&format!(
                    "{name}: compression method {m} (supported: 0 stored, 8 deflate)"
                )))
            }
        };
        if bytes.len() as u64 != usize_ {
            return Err(bad(&format!("{name}: size mismatch")));
        }
        out.push((name, bytes));
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// Parses a `.npy` array (format 1.0 to 3.0; `<u1`/`|u1`, `<i8`, `<f4`, `<f8`; C order).
pub fn parse_npy(file: &str, b: &[u8]) -> Result<Array> {
    let bad = |m: String| shape_err(file, m);
    if !b.starts_with(b"\x93NUMPY") || b.len() < 10 {
        return Err(bad("not a .npy array".into()));
    }
    let (hlen, hstart) = match b[6] {
        1 => (u16_at(b, 8).unwrap_or(0) as usize, 10),
        2 | 3 => (u32_at(b, 8).unwrap_or(0) as usize, 12),
        v => return Err(bad(format!(".npy version {v} (supported: 1 to 3)"))),
    };
    let header = std::str::from_utf8(
        b.get(hstart..hstart + hlen)
            .ok_or_else(|| bad("truncated header".into()))?,
    )
    .map_err(|_| bad("header is not text".into()))?;
    let value_of = |key: &str| -> Option<&str> {
        let i = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[i..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = value_of("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| bad("header without descr".into()))?;
    if value_of("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(bad("Fortran-order arrays are not supported".into()));
    }
    let shape_txt = value_of("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| bad("header without shape".into()))?;
    let shape: Vec<usize> = shape_txt
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad(format!("bad shape entry '{s}'"))))
        .collect::<Result<_>>()?;
    let count: usize = shape.iter().product();
    let body = &b[hstart + hlen..];
    let width = match descr {
        "|u1" | "<u1" => 1,
        "<f4" => 4,
        "<i8" | "<f8" => 8,
        d => {
            return Err(bad(format!(
                "dtype {d} (supported: uint8, int64, float32, float64, little-endian)"
            )))
        }
    };
    if body.len() < count * width {
        return Err(bad(format!(
            "{} bytes of data for {count} values of {width} bytes",
            body.len()
        )));
    }
    let chunks = body[..count * width].chunks_exact(width);
    let data: Vec<f64> = match descr {
        "<f4" => chunks
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")) as f64)
            .collect(),
        "<f8" => chunks
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        "<i8" => chunks
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as f64)
            .collect(),
        _ => chunks.map(|c| c[0] as f64).collect(),
    };
    Ok(Array { shape, data })
}

/// The arrays of `dir/file` (a `.npz`), by member name without the `.npy` suffix.
pub fn read_npz(dir: &Path, file: &str) -> Result<std::collections::BTreeMap<String, Array>> {
    let bytes = read_file(dir, file)?;
    unzip(file, &bytes)?
        .into_iter()
        .map(|(name, b)| {
            let key = name.trim_end_matches(".npy").to_string();
            Ok((key, parse_npy(file, &b)?))
        })
        .collect()
}

/// The array `key` of a `.npz`'s members, or a shape error listing the keys it has.
pub fn member<'a>(
    arrays: &'a std::collections::BTreeMap<String, Array>,
    file: &str,
    key: &str,
) -> Result<&'a Array> {
    arrays.get(key).ok_or_else(|| {
        shape_err(
            file,
            format!(
                "no array '{key}' (it has: {})",
                arrays.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// Rows of numbers of a CSV file with a header row; every row must have `columns` fields.
pub fn read_csv(dir: &Path, file: &str, columns: usize) -> Result<Vec<Vec<f64>>> {
    let bytes = read_file(dir, file)?;
    let text = String::from_utf8(bytes).map_err(|_| shape_err(file, "not UTF-8 text"))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let row: Vec<f64> = line
            .split(',')
            .map(|f| {
                f.trim()
                    .parse::<f64>()
                    .map_err(|_| shape_err(file, format!("line {}: '{f}' is not a number", i + 1)))
            })
            .collect::<Result<_>>()?;
        if row.len() != columns {
            return Err(shape_err(
                file,
                format!(
                    "line {} has {} columns, expected {columns}",
                    i + 1,
                    row.len()
                ),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, body: &[u8]) -> Vec<u8> {
        let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(body);
        b
    }

    /// A stored (method 0) zip of the given members, as a reference writer would lay it out.
    fn zip(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in members {
            let offset = out.len() as u32;
            let mut local = b"PK\x03\x04".to_vec();
            local.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            local.extend_from_slice(&(data.len() as u32).to_le_bytes());
            local.extend_from_slice(&(data.len() as u32).to_le_bytes());
            local.extend_from_slice(&(name.len() as u16).to_le_bytes());
            local.extend_from_slice(&0u16.to_le_bytes());
            local.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&local);
            out.extend_from_slice(data);
            let mut c = b"PK\x01\x02".to_vec();
            c.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            c.extend_from_slice(&(data.len() as u32).to_le_bytes());
            c.extend_from_slice(&(data.len() as u32).to_le_bytes());
            c.extend_from_slice(&(name.len() as u16).to_le_bytes());
            c.extend_from_slice(&[0; 12]);
            c.extend_from_slice(&offset.to_le_bytes());
            c.extend_from_slice(name.as_bytes());
            central.extend_from_slice(&c);
        }
        let cd_offset = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_offset.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    #[test]
    fn npy_of_each_dtype() {
        let a = parse_npy("t", &npy("|u1", "(2, 3)", &[1, 2, 3, 4, 5, 6])).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let body: Vec<u8> = [1.5f64, -2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let a = parse_npy("t", &npy("<f8", "(2,)", &body)).unwrap();
        assert_eq!((a.shape, a.data), (vec![2], vec![1.5, -2.0]));
        let body: Vec<u8> = [0.25f32].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(
            parse_npy("t", &npy("<f4", "(1,)", &body)).unwrap().data,
            vec![0.25]
        );
        assert!(parse_npy("t", &npy("<c16", "(1,)", &[0; 16])).is_err());
        assert!(parse_npy("t", &npy("|u1", "(4,)", &[1])).is_err());
        assert!(parse_npy("t", b"nonsense").is_err());
    }

    #[test]
    fn stored_zip_members_and_shape_checks() {
        let z = zip(&[
            ("a.npy", npy("|u1", "(2,)", &[7, 8])),
            ("b.npy", npy("|u1", "(1, 1)", &[9])),
        ]);
        let m = unzip("t.npz", &z).unwrap();
        assert_eq!(m.len(), 2);
        let a = parse_npy("t.npz", &m[0].1).unwrap();
        assert_eq!(a.data, vec![7.0, 8.0]);
        assert!(a.expect_shape("t.npz", "a", &[Some(2)]).is_ok());
        let e = a.expect_shape("t.npz", "a", &[Some(3)]).unwrap_err();
        assert!(e.to_string().contains("expected (3)"), "{e}");
        assert!(unzip("t.npz", &z[..z.len() - 30]).is_err());
    }

    #[test]
    fn missing_file_names_file_and_dir() {
        let e = read_file(Path::new("/nonexistent-dir"), "x.npz").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("x.npz") && s.contains("/nonexistent-dir"), "{s}");
        assert!(s.contains("TESSERA_DATA"), "{s}");
    }
}
