//! Where a bad value of a machine description was written. A description that `extends`
//! another is merged before it is checked, so an error found in the merged value used to name
//! the file that was loaded, without a line, even when the value came from the file it
//! extends (issue 25 item 7). These functions walk the `extends` chain, child first, and name
//! the file that writes the field and its line: for range errors ([`SimError::Field`]) and for
//! type errors of the merged value ([`SimError::Config`], whose message ends with the field's
//! path, "in `chip.lanes`").

use crate::arch::{resolve_extends_base, BUILTIN};
use crate::error::SimError;
use crate::limits::line_of;
use std::path::{Path, PathBuf};

/// How deep the search follows `extends` (as deep as [`crate::arch::resolve_extends`]).
const MAX_DEPTH: usize = 8;

/// The file of the `extends` chain starting at `text` (named `origin`, in `dir`) that writes
/// the field at dotted path `field`, and the line; the child first.
pub fn find_in_chain(
    text: &str,
    origin: &str,
    dir: Option<&Path>,
    field: &str,
) -> Option<(String, usize)> {
    let (mut text, mut origin, mut dir) = (
        text.to_string(),
        origin.to_string(),
        dir.map(Path::to_path_buf),
    );
    for _ in 0..=MAX_DEPTH {
        if let Some(line) = line_of(&text, field) {
            return Some((origin, line));
        }
        let v: toml::Value = toml::from_str(&text).ok()?;
        let base = v.get("extends")?.as_str()?.to_string();
        let (t, o, d) = base_description(&base, dir.as_deref())?;
        (text, origin, dir) = (t, o, d);
    }
    None
}

/// The text of the description `extends = name` names, how to call it, and its directory.
fn base_description(name: &str, dir: Option<&Path>) -> Option<(String, String, Option<PathBuf>)> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return Some((text.to_string(), format!("configs/{name}.toml"), None));
    }
    let path = resolve_extends_base(name, dir);
    let text = std::fs::read_to_string(&path).ok()?;
    let parent = path.parent().map(Path::to_path_buf);
    Some((text, path.display().to_string(), parent))
}

/// `e`, found checking the description `text` (named `origin`, in `dir`), with the file and
/// line that write its field.
pub fn locate_in_chain(e: SimError, origin: &str, text: &str, dir: Option<&Path>) -> SimError {
    match e {
        SimError::Field {
            origin: o,
            line: None,
            name,
            value,
            allowed,
        } if o.is_empty() => {
            let (origin, line) = match find_in_chain(text, origin, dir, &name) {
                Some((file, line)) => (file, Some(line)),
                None => (origin.to_string(), None),
            };
            SimError::Field {
                origin,
                line,
                name,
                value,
                allowed,
            }
        }
        SimError::Config { origin: o, message } => {
            // toml's type errors end with "in `dotted.path`".
            let field = message
                .rsplit_once("in `")
                .and_then(|(_, rest)| rest.trim_end().strip_suffix('`'))
                .map(str::to_string);
            match field.and_then(|f| find_in_chain(text, origin, dir, &f)) {
                Some((file, line)) => SimError::Config {
                    origin: file,
                    message: format!("line {line}: {message}"),
                },
                None => SimError::Config { origin: o, message },
            }
        }
        e => e,
    }
}
