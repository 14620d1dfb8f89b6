//! The versioned `--json` schemas: every JSON object a command prints carries
//! `"schema": "tessera.<command>/<version>"`, one schema per command (per subcommand where
//! they print different objects), documented field by field in docs/json.md. A script checks
//! the name and the version before it reads a field; a change that removes or retypes a field
//! bumps the version, one that adds a field does not.

/// The version of every schema below (they move together; docs/json.md lists the changes).
pub const VERSION: u32 = 1;

/// One command's JSON object kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// `tessera simulate --json`: one report.
    Simulate,
    /// `tessera run --json`: one program run.
    Run,
    /// `tessera sweep --json`: one object per design point.
    Sweep,
    /// `tessera reproduce --json`: one object per calibration target.
    Reproduce,
    /// `tessera plan --json`: one object per level.
    Plan,
    /// `tessera params show --format json`: one parameter set.
    ParamsShow,
    /// `tessera params list --json`: one object per preset.
    ParamsList,
    /// `tessera area --json`: one design's area, power and cost.
    Area,
    /// `tessera area --targets --json`: one object per published area target.
    AreaTargets,
    /// `tessera info --json`: the host's CPU features and NTT kernels.
    Info,
    /// `tessera bench ntt --json`: one object per transform size.
    BenchNtt,
    /// `tessera bench hmult|hrot|hoisted16 --json`: one operation's timing.
    BenchOp,
    /// `tessera bench bootstrap --json`: one bootstrapping's timing and structure.
    BenchBootstrap,
    /// `tessera bench ... --profile --json`: one object per primary operation.
    BenchProfile,
}

impl Schema {
    /// Every schema, in the order docs/json.md documents them.
    pub const ALL: [Schema; 14] = [
        Schema::Simulate,
        Schema::Run,
        Schema::Sweep,
        Schema::Reproduce,
        Schema::Plan,
        Schema::ParamsShow,
        Schema::ParamsList,
        Schema::Area,
        Schema::AreaTargets,
        Schema::Info,
        Schema::BenchNtt,
        Schema::BenchOp,
        Schema::BenchBootstrap,
        Schema::BenchProfile,
    ];

    /// The command part of the schema name.
    pub fn command(self) -> &'static str {
        match self {
            Schema::Simulate => "simulate",
            Schema::Run => "run",
            Schema::Sweep => "sweep",
            Schema::Reproduce => "reproduce",
            Schema::Plan => "plan",
            Schema::ParamsShow => "params.show",
            Schema::ParamsList => "params.list",
            Schema::Area => "area",
            Schema::AreaTargets => "area.targets",
            Schema::Info => "info",
            Schema::BenchNtt => "bench.ntt",
            Schema::BenchOp => "bench.op",
            Schema::BenchBootstrap => "bench.bootstrap",
            Schema::BenchProfile => "bench.profile",
        }
    }

    /// The value of the `schema` field.
    ///
    /// ```
    /// use tessera_cli::schema::Schema;
    /// assert_eq!(Schema::Simulate.id(), "tessera.simulate/1");
    /// assert_eq!(Schema::BenchNtt.id(), "tessera.bench.ntt/1");
    /// ```
    pub fn id(self) -> String {
        format!("tessera.{}/{VERSION}", self.command())
    }
}
