//! Presentation helpers: aligned tables for people, one JSON object per line for scripts.

use crate::schema::Schema;
use serde_json::Value;
use std::io::Write;

/// Writes one line to stdout. A closed pipe (`tessera ... | head`) ends the program quietly
/// instead of panicking, as command-line tools are expected to.
pub fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

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
    emit(&line(headers.to_vec()));
    emit(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    for r in rows {
        emit(&line(r.iter().map(|s| s.as_str()).collect()));
    }
}

/// Prints one JSON object on its own line, with its `schema` field (`tessera.<command>/<version>`,
/// docs/json.md) added.
pub fn json_line(schema: Schema, v: &Value) {
    let mut v = v.clone();
    if let Value::Object(map) = &mut v {
        map.insert("schema".into(), schema.id().into());
    }
    emit(&v.to_string());
}
