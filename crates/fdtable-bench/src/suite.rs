//! The suite: workloads made of cases (one implementation on one configuration), run in order
//! in one process.

use crate::framework::{Measurement, Opts};
use crate::impls::gvisor::Gvisor;
use crate::output::{Key, Row};
use crate::workloads;

/// What a case may use while it runs.
pub struct Env {
    /// Sample settings.
    pub opts: Opts,
    /// The gVisor harness (built on first use).
    pub gvisor: Gvisor,
}

/// One measurement of one case: what, by whom, and the samples.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The configuration.
    pub key: Key,
    /// The implementation.
    pub impl_name: String,
    /// A note for the row.
    pub note: Option<String>,
    /// The samples.
    pub m: Measurement,
    /// Measured interleaved with the other implementations of its case
    /// ([`crate::framework::measure_interleaved`]): sample `i` of each is from the same time.
    pub interleaved: bool,
}

impl Measured {
    /// Whether `other` measured the same case with the same implementation.
    pub fn same(&self, other: &Measured) -> bool {
        self.key == other.key && self.impl_name == other.impl_name
    }

    /// Adds another round's samples.
    pub fn merge(&mut self, other: Measured) {
        self.m.samples.extend(other.m.samples);
        self.m.cpu.extend(other.m.cpu);
        self.m.par.extend(other.m.par);
    }

    /// The row.
    pub fn row(&self) -> Row {
        let mut row = Row::new(&self.key, &self.impl_name, &self.m);
        row.note = self.note.clone();
        row.interleaved = self.interleaved;
        row
    }
}

type RunFn = Box<dyn Fn(&mut Env) -> Result<Vec<Measured>, String>>;

/// One implementation on one configuration (or, for gvisor, on all of a workload's).
pub struct Case {
    /// For progress lines.
    pub label: String,
    /// The implementation (the first of `members`).
    pub impl_name: &'static str,
    /// Every implementation the case measures (one, or an interleaved group's).
    pub members: Vec<&'static str>,
    run: RunFn,
}

impl Case {
    /// A case that makes one measurement.
    pub fn measure(
        key: Key,
        impl_name: &'static str,
        f: impl Fn(&Opts) -> Result<Measurement, String> + 'static,
    ) -> Self {
        Self::measure_noted(key, impl_name, None, f)
    }

    /// A case that makes one measurement and notes what it measured.
    pub fn measure_noted(
        key: Key,
        impl_name: &'static str,
        note: Option<&str>,
        f: impl Fn(&Opts) -> Result<Measurement, String> + 'static,
    ) -> Self {
        let note = note.map(str::to_string);
        Case {
            label: format!("{} {impl_name}", key.label()),
            impl_name,
            members: vec![impl_name],
            run: Box::new(move |env| {
                Ok(vec![Measured {
                    key: key.clone(),
                    impl_name: impl_name.to_string(),
                    note: note.clone(),
                    m: f(&env.opts)?,
                    interleaved: false,
                }])
            }),
        }
    }

    /// A case that measures several implementations interleaved
    /// ([`crate::framework::measure_interleaved`]): `f` returns one measurement per member,
    /// in the order of `members` (name, note).
    pub fn interleaved(
        key: Key,
        members: &'static [(&'static str, Option<&'static str>)],
        f: impl Fn(&Opts) -> Result<Vec<Measurement>, String> + 'static,
    ) -> Self {
        let names: Vec<&'static str> = members.iter().map(|m| m.0).collect();
        Case {
            label: format!("{} {} (interleaved)", key.label(), names.join(", ")),
            impl_name: names[0],
            members: names,
            run: Box::new(move |env| {
                let ms = f(&env.opts)?;
                if ms.len() != members.len() {
                    return Err(format!(
                        "{} measurements for {} implementations",
                        ms.len(),
                        members.len()
                    ));
                }
                Ok(members
                    .iter()
                    .zip(ms)
                    .map(|((name, note), m)| Measured {
                        key: key.clone(),
                        impl_name: name.to_string(),
                        note: note.map(str::to_string),
                        m,
                        interleaved: true,
                    })
                    .collect())
            }),
        }
    }

    /// The gVisor harness's rows for `workload`.
    pub fn gvisor(workload: &'static str) -> Self {
        Case {
            label: format!("{workload} gvisor (Go harness)"),
            impl_name: "gvisor",
            members: vec!["gvisor"],
            run: Box::new(move |env| {
                let opts = env.opts;
                let lines = env.gvisor.run(workload, &opts)?;
                Ok(lines
                    .iter()
                    .filter(|l| l.workload == workload)
                    .map(|l| {
                        let key = Key {
                            workload,
                            threads: l.threads,
                            fds: l.fds,
                            variant: l.variant.as_deref().and_then(known_variant),
                        };
                        Measured {
                            key,
                            impl_name: l.impl_name.clone(),
                            note: (workload == "open1")
                                .then(|| "eventfd create + install + close, no path walk".into()),
                            m: l.measurement(),
                            interleaved: false,
                        }
                    })
                    .collect())
            }),
        }
    }

    /// Runs the case (once per round).
    pub fn run(&self, env: &mut Env) -> Result<Vec<Measured>, String> {
        (self.run)(env)
    }
}

/// Maps a harness's variant string to ours.
fn known_variant(v: &str) -> Option<&'static str> {
    match v {
        "fragmented" => Some("fragmented"),
        _ => None,
    }
}

/// A workload of the suite.
pub struct Workload {
    /// Name, as `--workload` takes it and the tables print it.
    pub name: &'static str,
    /// One line on what it measures.
    pub about: &'static str,
    /// Its cases, in run order.
    pub cases: fn() -> Vec<Case>,
    /// Derives figures from the workload's rows once they are all in (e.g. dd's layer share).
    pub finish: fn(&mut [Row]),
}

/// Workloads defined by another crate, and the implementations they measure.
type Extra = (fn() -> Vec<Workload>, &'static [&'static str]);

/// What the binary registered before a run ([`register`]).
static EXTRA: std::sync::OnceLock<Extra> = std::sync::OnceLock::new();

/// Adds workloads defined outside this crate (the WASI hosts' comparison, whose engine this
/// crate does not depend on) after this crate's own, with the implementations they measure.
/// Only the first registration counts.
pub fn register(workloads: fn() -> Vec<Workload>, impls: &'static [&'static str]) {
    let _ = EXTRA.set((workloads, impls));
}

/// Every workload, in run order.
pub fn all() -> Vec<Workload> {
    let mut all = workloads::all();
    if let Some((extra, _)) = EXTRA.get() {
        all.extend(extra());
    }
    all
}

/// Every implementation name, this crate's ([`IMPLS`]) and the registered ones.
pub fn impls() -> Vec<&'static str> {
    let mut all = IMPLS.to_vec();
    if let Some((_, extra)) = EXTRA.get() {
        all.extend(extra.iter().filter(|i| !IMPLS.contains(i)));
    }
    all
}

/// Names of every implementation the suite knows.
pub const IMPLS: &[&str] = &[
    "fdtable",
    "fdtable-rcu",
    "before",
    "mutex",
    "rwlock",
    "kernel",
    "gvisor",
    "floor",
];
