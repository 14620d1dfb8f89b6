//! The thread pool that limb-parallel work runs on, with a user-settable size.
//!
//! Rayon's global pool can be sized only once per process; Tessera keeps its own pool, which
//! [`set_num_threads`] replaces at any time, and runs parallel work inside it with [`install`].

use crate::error::{MathError, Result};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, RwLock};

static POOL: RwLock<Option<Arc<ThreadPool>>> = RwLock::new(None);

/// Sets the number of worker threads (`1..=1024`); 0 is rejected.
pub fn set_num_threads(threads: usize) -> Result<()> {
    if !(1..=1024).contains(&threads) {
        return Err(MathError::OutOfRange {
            name: "threads",
            value: threads.to_string(),
            allowed: "1 to 1024".into(),
        });
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("tessera-{i}"))
        .build()
        .map_err(|e| MathError::OutOfRange {
            name: "threads",
            value: threads.to_string(),
            allowed: format!("a count the OS can start ({e})"),
        })?;
    *POOL.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(pool));
    Ok(())
}

/// Worker threads that [`install`] runs on (the machine's logical CPUs until set).
pub fn num_threads() -> usize {
    match current() {
        Some(p) => p.current_num_threads(),
        None => rayon::current_num_threads(),
    }
}

fn current() -> Option<Arc<ThreadPool>> {
    POOL.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Runs `f` on Tessera's pool; rayon parallel iterators inside use that pool.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match current() {
        Some(p) => p.install(f),
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_is_settable() {
        assert!(set_num_threads(0).is_err());
        set_num_threads(3).unwrap();
        assert_eq!(install(rayon::current_num_threads), 3);
        assert_eq!(num_threads(), 3);
        set_num_threads(1).unwrap();
        assert_eq!(install(rayon::current_num_threads), 1);
    }
}
