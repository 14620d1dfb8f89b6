//! Errors in a description that `extends` another name the file that writes the bad value
//! and its line (issue 25 item 7), not the merged description.

use tessera_sim::arch::Arch;

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tessera-origin-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn load_err(name: &str, text: &str) -> String {
    let path = dir().join(name);
    std::fs::write(&path, text).unwrap();
    match Arch::load(path.to_str().unwrap()) {
        Ok(_) => panic!("{name} loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_bad_inherited_value_names_the_file_and_line_it_is_written_on() {
    let ark = tessera_sim::arch::BUILTIN
        .iter()
        .find(|(n, _)| *n == "ark")
        .unwrap()
        .1;
    let bad_base = ark.replace("ghz = 1.0", "ghz = -1.0");
    let line = bad_base.lines().position(|l| l == "ghz = -1.0").unwrap() + 1;
    std::fs::write(dir().join("bad-base.toml"), &bad_base).unwrap();
    let e = load_err(
        "child.toml",
        "extends = \"bad-base.toml\"\nname = \"child\"\n\n[chip]\nlanes = 128\n",
    );
    assert!(
        e.contains(&format!(
            "bad-base.toml line {line}: invalid clock.ghz '-1'"
        )),
        "{e}"
    );
    // Two levels down, through a child that extends the child.
    let e = load_err(
        "grandchild.toml",
        "extends = \"child.toml\"\nname = \"g\"\n",
    );
    assert!(e.contains(&format!("bad-base.toml line {line}")), "{e}");
    // A value the child writes is found in the child, types included.
    let e = load_err(
        "typed.toml",
        "extends = \"ark\"\nname = \"t\"\n\n[chip]\n\nlanes = \"many\"\n",
    );
    assert!(e.contains("typed.toml") && e.contains("line 6"), "{e}");
    let e = load_err(
        "range.toml",
        "extends = \"ark\"\nname = \"r\"\n[memory.offchip]\nlatency_ns = -3.0\n",
    );
    assert!(e.contains("range.toml line 4"), "{e}");
}
