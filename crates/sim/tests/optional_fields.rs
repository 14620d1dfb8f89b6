//! Fields a machine does not use may be left out (issue 25 item 7): `[units.bconv]` (BConv
//! on the MADUs), `[units.prng]` (only seeded keys use it), `[options]` (every option off).

use tessera_sim::arch::{Arch, BUILTIN};

fn ark_text() -> &'static str {
    BUILTIN.iter().find(|(n, _)| *n == "ark").unwrap().1
}

/// `text` without the TOML table `[header]` (up to the next table).
fn without_table(text: &str, header: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            skipping = line == header;
        }
        if !skipping {
            out.push(line);
        }
    }
    out.join("\n") + "\n"
}

#[test]
fn unused_units_and_options_may_be_omitted() {
    let mut text = ark_text().to_string();
    for t in ["[units.bconv]", "[units.prng]", "[options]"] {
        text = without_table(&text, t);
    }
    let Arch::Vector(m) = Arch::from_toml(&text, "lean.toml").unwrap() else {
        panic!("a vector machine")
    };
    assert_eq!((m.units.bconv.count, m.units.prng.count), (0, 0));
    assert!(!m.options.seeded_keys && !m.options.of_twist && !m.options.bconv_scale_in_intt);
    // It simulates: BConv runs on the MADUs.
    let w = tessera_programs::workloads::record(&tessera_programs::workloads::WorkloadSpec::new(
        "keyswitch",
        "test-small",
    ))
    .unwrap();
    let r = tessera_sim::simulate(&m, &w.label, &w.instrs).unwrap();
    assert!(r.time_s > 0.0 && r.time_s.is_finite());
    assert_eq!(r.utilization.get("bconv").copied().unwrap_or(0.0), 0.0);
    // A BConv unit written as count = 0 alone needs no lanes.
    let h3ish = without_table(ark_text(), "[units.bconv]").replace(
        "[units.auto]",
        "[units.bconv]\ncount = 0\ncite = \"none\"\n\n[units.auto]",
    );
    assert!(Arch::from_toml(&h3ish, "h3ish.toml").is_ok());
    // Seeded keys need the PRNG: switching them on without one is an error naming it.
    let e = Arch::Vector(m)
        .with_settings(&["options.seeded_keys=true".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("units.prng") && e.contains("seeded_keys"), "{e}");
    // A unit that every design uses may not be left out.
    let e = Arch::from_toml(&without_table(ark_text(), "[units.ntt]"), "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("ntt"), "{e}");
}
