//! Presentation helpers: aligned tables for people, one JSON object per line for scripts.

use serde_json::Value;

/// Prints rows as an aligned text table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut width: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    println!("{}", line(headers.to_vec()));
    println!("{}", width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
    for r in rows {
        println!("{}", line(r.iter().map(|s| s.as_str()).collect()));
    }
}

/// Prints one JSON object on its own line.
pub fn json_line(v: &Value) {
    println!("{v}");
}
