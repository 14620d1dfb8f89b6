//! `tessera params`: the parameter sets as files (docs/parameters.md). `show` prints a preset
//! (or a file, normalised) in the file form a user edits and passes back with `--params FILE`;
//! `list` names the presets with their shape and security.

use crate::output::{emit, json_line, table};
use crate::schema::Schema;
use serde_json::json;
use tessera_ckks::params_file::{
    bootstrap_preset_names, preset_file_names, short_bootstrap_name, ParamsFile,
};

/// What `tessera params` does.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ParamsCommand {
    /// Print a preset (or a parameter file) in the file form: save it, edit it, pass it with
    /// --params FILE to simulate, bench, run and plan.
    Show {
        /// A preset name (tessera params list) or a path to a parameter file.
        name: String,
        /// toml (the file form) or json (the same fields, plus the generated chain's figures).
        #[arg(long, default_value = "toml", value_parser = ["toml", "json"])]
        format: String,
    },
    /// The built-in parameter sets: ring degree, levels, special primes, dnum, log2(PQ) and
    /// security.
    List {
        /// One JSON object per set instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: &ParamsCommand) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        ParamsCommand::Show { name, format } => show(name, format),
        ParamsCommand::List { json } => list(*json),
    }
}

fn show(name: &str, format: &str) -> Result<(), Box<dyn std::error::Error>> {
    let file = ParamsFile::load(name)?;
    // Generating the primes checks the set as every command would (security included).
    let p = file.parameters()?;
    let text = file.to_toml();
    if format == "json" {
        let table: toml::Table = text.parse()?;
        let mut v = serde_json::to_value(table)?;
        v["derived"] = json!({
            "n": p.n(),
            "max_level": p.max_level(),
            "special_primes": p.p().len(),
            "alpha": p.alpha(),
            "log_qp": p.security().log_qp,
            "max_prime_bits": p.max_prime_bits(),
            "required_word_bits": file.required_word_bits(&p),
            "secure_128": p.security().secure_128,
            "model_only": p.security().model_only,
            "security": p.security().summary,
        });
        json_line(Schema::ParamsShow, &v);
        return Ok(());
    }
    for line in text.lines() {
        emit(line);
    }
    emit(&format!("# {}", p.security().summary));
    Ok(())
}

fn list(json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let boot = bootstrap_preset_names();
    let mut rows = Vec::new();
    for name in preset_file_names() {
        let file = ParamsFile::load(name)?;
        let p = file.parameters()?;
        let short = short_bootstrap_name(name);
        let bootstraps = file.bootstrap.is_some() && boot.iter().any(|b| b == short);
        if json {
            json_line(
                Schema::ParamsList,
                &json!({
                    "name": name,
                    "n": p.n(),
                    "max_level": p.max_level(),
                    "special_primes": p.p().len(),
                    "dnum": p.dnum(),
                    "log_qp": p.security().log_qp,
                    "secure_128": p.security().secure_128,
                    "bootstrap": bootstraps,
                    "source": p.literal().source,
                }),
            );
            continue;
        }
        rows.push(vec![
            name.to_string(),
            format!("2^{}", p.literal().log_n),
            p.max_level().to_string(),
            p.p().len().to_string(),
            p.dnum().to_string(),
            format!("{:.0}", p.security().log_qp),
            if p.security().secure_128 {
                "128-bit".into()
            } else {
                "NOT SECURE (test)".into()
            },
            if bootstraps {
                format!("yes (--params {short})")
            } else {
                "-".into()
            },
        ]);
    }
    if !json {
        table(
            &[
                "name",
                "N",
                "L",
                "K",
                "dnum",
                "log2 PQ",
                "security",
                "bootstrapping",
            ],
            &rows,
        );
    }
    Ok(())
}
