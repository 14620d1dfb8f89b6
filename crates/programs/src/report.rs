//! What a program run reports: its checks against the plaintext replica, time per phase and
//! HE-operation counts. The CLI and Python print it; nothing here formats for people.

use crate::counter::OpCounts;
use serde::Serialize;
use std::time::Instant;
use tessera_backend::Instr;

/// One check of a decrypted result against the replica (or a bound).
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// The measured value.
    pub value: f64,
    /// The bound it must meet, as text (`<= 1e-3`, `>= 0.955`), if any.
    pub bound: Option<String>,
    /// Whether it met the bound (true when there is none).
    pub pass: bool,
}

impl Check {
    /// A value reported without a bound.
    pub fn info(name: &str, value: f64) -> Self {
        Self {
            name: name.into(),
            value,
            bound: None,
            pass: true,
        }
    }

    /// The accelerator's memory as information rows (none on the CPU, whose memory the
    /// process's peak RSS reports): its peak and what the run still holds, in GB, each row
    /// naming the device.
    pub fn device(report: Option<tessera_backend::DeviceReport>) -> Vec<Self> {
        report
            .map(|d| {
                vec![
                    Self::info(
                        &format!("device memory peak, GB ({})", d.name),
                        d.peak_bytes as f64 / 1e9,
                    ),
                    Self::info(
                        &format!("device memory held at the end, GB ({})", d.name),
                        d.bytes_in_use as f64 / 1e9,
                    ),
                ]
            })
            .unwrap_or_default()
    }

    /// `value <= max`.
    pub fn at_most(name: &str, value: f64, max: f64) -> Self {
        Self {
            name: name.into(),
            value,
            bound: Some(format!("<= {max:e}")),
            pass: value <= max,
        }
    }

    /// `value >= min`.
    pub fn at_least(name: &str, value: f64, min: f64) -> Self {
        Self {
            name: name.into(),
            value,
            bound: Some(format!(">= {min}")),
            pass: value >= min,
        }
    }
}

/// Wall time of each phase, seconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Phases {
    /// Parameter and key generation.
    pub keygen_s: f64,
    /// Preparing and encrypting the inputs.
    pub encrypt_s: f64,
    /// The encrypted computation.
    pub compute_s: f64,
    /// Decryption and the check.
    pub decrypt_s: f64,
}

impl From<[f64; 4]> for Phases {
    /// From the four phase times in order: keygen, encrypt, compute, decrypt.
    fn from([keygen_s, encrypt_s, compute_s, decrypt_s]: [f64; 4]) -> Self {
        Self {
            keygen_s,
            encrypt_s,
            compute_s,
            decrypt_s,
        }
    }
}

/// Times phases in order.
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Starts timing.
    pub fn start() -> Self {
        Self(Instant::now())
    }

    /// Seconds since the last lap (or the start), and restarts.
    pub fn lap(&mut self) -> f64 {
        let s = self.0.elapsed().as_secs_f64();
        self.0 = Instant::now();
        s
    }
}

/// The report of one `tessera run`.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Program name.
    pub program: String,
    /// Parameter set.
    pub params: String,
    /// Program size (HELR: the mini-batch).
    pub size: usize,
    /// Iterations (or inferences) run.
    pub iterations: usize,
    /// Checks against the replica.
    pub checks: Vec<Check>,
    /// Time per phase.
    pub phases: Phases,
    /// Outermost HE operations of the computation, by class.
    pub counts: OpCounts,
    /// Bootstrappings performed.
    pub boots: usize,
    /// Levels between bootstrappings at this parameter set.
    pub levels_per_boot: usize,
    /// Whether rotation keys were made on first use (memory bound).
    pub keys_on_demand: bool,
    /// Notes on what the run is (and is not).
    pub notes: Vec<String>,
}

impl RunReport {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }
}

/// A program recorded on the trace backend.
pub struct Recorded {
    /// What it is.
    pub label: String,
    /// The instruction stream.
    pub instrs: Vec<Instr>,
    /// Outermost HE operations in it.
    pub counts: OpCounts,
    /// Units of work recorded (HELR: iterations; LoLa: images).
    pub iterations: usize,
    /// What one unit is ("iteration", "image").
    pub unit: &'static str,
    /// Units in one whole run of the program, where a run is a fixed number of them (sort of
    /// `2^k` values: `k (k + 1) / 2` steps; HELR: its iterations), so that time per run =
    /// window time / `iterations` x `per_run`. `None` where a run has no fixed size (LoLa's
    /// images are a stream).
    pub per_run: Option<usize>,
    /// What the recording holds, for people.
    pub window: String,
    /// Bootstrappings recorded.
    pub boots: usize,
    /// Levels between bootstrappings.
    pub levels_per_boot: usize,
    /// Slots of a full ciphertext (N / 2).
    pub slots: usize,
}

/// The largest `|a[i] - b[i]|` over the common length: the error every program's check
/// reports against its replica (0 for empty inputs).
///
/// ```
/// assert_eq!(tessera_programs::report::max_diff(&[1.0, 2.0], &[1.5, 1.0]), 1.0);
/// ```
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_rows_name_the_device_and_are_absent_on_the_cpu() {
        assert!(Check::device(None).is_empty());
        let rows = Check::device(Some(tessera_backend::DeviceReport {
            name: "GPU X (CUDA device 0)".into(),
            capacity_bytes: 80_000_000_000,
            bytes_in_use: 1_500_000_000,
            peak_bytes: 9_000_000_000,
        }));
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|c| c.name.contains("GPU X") && c.pass));
        assert_eq!((rows[0].value, rows[1].value), (9.0, 1.5));
    }
}
