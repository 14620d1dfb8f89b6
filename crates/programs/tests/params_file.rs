//! Programs take a parameter file with a `[bootstrap]` table wherever they take a preset
//! (`tessera run --params FILE`, `tessera simulate --workload helr --params FILE`).

use tessera_ckks::params_file::{resolve_bootstrap, ParamsFile};
use tessera_programs::setup::parameter_set;

#[test]
fn a_bootstrapping_file_is_a_program_parameter_set() {
    let dir = std::env::temp_dir().join(format!("tessera-programs-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("boot.toml");
    std::fs::write(&path, ParamsFile::load("test-boot").unwrap().to_toml()).unwrap();
    let (ctx, boot) = parameter_set(path.to_str().unwrap(), 16).unwrap();
    let (want, bp) = resolve_bootstrap("test-boot").unwrap();
    assert_eq!(ctx.params().q(), want.q());
    assert_eq!(boot.parameters().cts_levels, bp.cts_levels);
    assert_eq!(boot.parameters().slots, Some(16));
    // Neither a set nor a file: the error lists the sets and says a file is allowed.
    let e = parameter_set("no-such-set", 16).err().unwrap().to_string();
    assert!(e.contains("ark") && e.contains("parameter file"), "{e}");
    // A file without [bootstrap] is refused, naming the file.
    let plain = dir.join("plain.toml");
    std::fs::write(&plain, ParamsFile::load("test-small").unwrap().to_toml()).unwrap();
    let e = parameter_set(plain.to_str().unwrap(), 16)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("plain.toml") && e.contains("[bootstrap]"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
