//! `tessera simulate` as a stream (issue 25 item 1): a recording fed to the engine while it
//! runs, and a trace file read line by line, report exactly what the held trace reports.

use tessera_lab::{record, run, simulate, Request};
use tessera_sim::arch::Arch;

/// The report as JSON, without the parameter set's label (which `run` adds and `simulate`
/// leaves to its caller).
fn figures(out: &tessera_lab::Outcome) -> serde_json::Value {
    let mut v = out.to_json().unwrap();
    v.as_object_mut().unwrap().remove("params");
    v
}

/// The held way: record into a `Vec`, then simulate it.
fn held(r: &Request) -> serde_json::Value {
    let arch = Arch::load_with(&r.arch, &r.sets).unwrap();
    let (w, window) = record(r, "ark", &|_| {}).unwrap();
    assert!(!w.instrs.is_empty());
    figures(&simulate(arch, r, &w, window).unwrap())
}

fn request(arch: &str, workload: &str, params: &str, size: Option<usize>) -> Request {
    let mut r = Request::new(arch, workload);
    r.params = Some(params.into());
    r.size = size;
    r
}

/// Built-in workloads and programs, recorded live into the engine on another thread: the
/// same report as recording first and simulating the held trace, on a plain machine and on
/// one with limb streaming and seeded keys (REED's 54-bit words take `test-small` only).
#[test]
fn a_live_recording_reports_what_the_held_trace_reports() {
    for r in [
        request("ark", "hmult", "test-small", None),
        request("ark", "bootstrap", "test-boot", None),
        request("ark", "logreg", "test-program", Some(512)),
        request("reed", "hmult", "test-small", None),
        request("reed", "keyswitch", "test-small", None),
    ] {
        let live = figures(&run(&r, &|_| {}).unwrap());
        assert_eq!(live, held(&r), "{} on {}", r.workload, r.arch);
    }
}

/// A trace file (saved by `--save-trace`) read one line at a time reports what the same
/// file read whole reports; a broken line ends the run with an error naming it.
#[test]
fn a_trace_file_streams_to_the_same_report() {
    let dir = std::env::temp_dir().join(format!("tessera-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("boot.jsonl");
    let mut r = request("ark", "bootstrap", "test-boot", None);
    r.save_trace = Some(path.to_string_lossy().into_owned());
    let saved = figures(&run(&r, &|_| {}).unwrap());
    let file = Request::new("ark", &path.to_string_lossy());
    let streamed = figures(&run(&file, &|_| {}).unwrap());
    let arch = Arch::load_with("ark", &[]).unwrap();
    let (w, _) = record(&file, "ark", &|_| {}).unwrap();
    let whole = figures(&simulate(arch, &file, &w, None).unwrap());
    assert_eq!(streamed, whole);
    assert_eq!(streamed["time_s"], saved["time_s"]);
    // A line that does not parse, past the start of the file.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(40, "{\"seq\": oops}");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let e = run(&Request::new("ark", &bad.to_string_lossy()), &|_| {}).unwrap_err();
    assert!(e.to_string().contains("line 41"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Throughput mode and the additive model stream too (issue 25 item 1): on every built-in
/// workload, on a plain machine (ARK) and one with limb streaming and seeded keys (REED), the
/// streamed report equals the held one (REED's 54-bit words take `test-small` only;
/// `test-boot` has 61-bit primes).
#[test]
fn throughput_and_additive_stream_to_the_held_report() {
    use tessera_lab::Mode;
    for name in tessera_programs::workloads::WORKLOADS {
        let params = if *name == "bootstrap" {
            "test-boot"
        } else {
            "test-small"
        };
        let base = request("ark", name, params, None);
        let (w, _) = record(&base, "ark", &|_| {}).unwrap();
        for arch in ["ark", "reed"] {
            if arch != "ark" && params == "test-boot" {
                continue;
            }
            for (mode, additive) in [(Mode::Throughput, false), (Mode::Latency, true)] {
                let mut r = request(arch, name, params, None);
                r.mode = mode;
                r.additive = additive;
                let live = run(&r, &|_| {}).unwrap();
                assert_eq!(live.additive.is_some(), additive);
                let a = Arch::load_with(arch, &[]).unwrap();
                let held = figures(&simulate(a, &r, &w, None).unwrap());
                assert_eq!(
                    figures(&live),
                    held,
                    "{name} on {arch} ({mode:?}, {additive})"
                );
            }
        }
    }
}

/// `--window`: 0 and more than 2^26 are refused by name before anything is recorded, a
/// single-PE model refuses it, and a window longer than the stream gives the default's
/// report on a workload whose live ranges fit both.
#[test]
fn the_window_option_is_checked_and_used() {
    for bad in [0, (1 << 26) + 1] {
        let mut r = request("ark", "hmult", "test-small", None);
        r.window = Some(bad);
        let e = run(&r, &|_| {}).unwrap_err().to_string();
        assert!(e.contains("window") && e.contains("67108864"), "{e}");
    }
    let mut pe = Request::new("cofhee", "ntt");
    pe.window = Some(16);
    let e = run(&pe, &|_| {}).unwrap_err().to_string();
    assert!(e.contains("--window") && e.contains("single-PE"), "{e}");
    let r = request("ark", "bootstrap", "test-boot", None);
    let default = figures(&run(&r, &|_| {}).unwrap());
    let mut long = r.clone();
    long.window = Some(1 << 20);
    assert_eq!(figures(&run(&long, &|_| {}).unwrap()), default);
    // A window of one instruction still runs, and on this stream it changes the schedule.
    let mut tiny = r.clone();
    tiny.window = Some(1);
    let t = figures(&run(&tiny, &|_| {}).unwrap());
    assert_ne!(t["time_s"], default["time_s"]);
}

/// `issue_window` reaches the engine on every path: live (streamed) and held, latency and
/// throughput, with the same report both ways; a window of one instruction holds some back
/// where the default holds none. 0 and more than 2^26 are refused by name before anything
/// is recorded, and a single-PE model refuses it.
#[test]
fn the_issue_window_reaches_the_engine_on_every_path() {
    use tessera_lab::Mode;
    for mode in [Mode::Latency, Mode::Throughput] {
        let mut r = request("ark", "hmult", "test-small", None);
        r.mode = mode;
        let default = figures(&run(&r, &|_| {}).unwrap());
        assert_eq!(default["window_holds"], 0, "{mode:?}");
        r.issue_window = Some(1);
        let live = figures(&run(&r, &|_| {}).unwrap());
        assert_eq!(live, held(&r), "{mode:?}");
        assert_eq!(live["issue_window"], 1, "{mode:?}");
        assert!(live["window_holds"].as_u64().unwrap() > 0, "{mode:?}");
    }
    for bad in [0, (1 << 26) + 1] {
        let mut r = request("ark", "hmult", "test-small", None);
        r.issue_window = Some(bad);
        let e = run(&r, &|what| panic!("recorded {what} before refusing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("issue_window") && e.contains("67108864"), "{e}");
    }
    let mut pe = Request::new("cofhee", "ntt");
    pe.issue_window = Some(16);
    let e = run(&pe, &|_| {}).unwrap_err().to_string();
    assert!(
        e.contains("--issue-window") && e.contains("single-PE"),
        "{e}"
    );
}
