//! Comparing the library with the log, and what to do when they disagree.
//!
//! Every step's [`Check`] is counted here. A disagreement is classified — *drift* in a table
//! that may change invisibly (io_uring, unprinted descriptors: P12), *inherited* when the
//! initial state was assumed and the descriptors involved were never seen (P10), else a
//! *mismatch* — and the table is resynchronised to the log (a gap below a returned fd was
//! taken invisibly; a returned fd the model held open was closed invisibly), so that one
//! error does not cascade into the next results. Descriptor arguments are checked in
//! [`super::args`].

use super::Engine;
use super::step::{Check, Step, Val, force_install};
use crate::decode::Kind;
use crate::parse::Call;
use crate::stats::Exactness;
use fdtable::FdState;

/// The largest gap a resync fills with opaque descriptors.
const MAX_GAP: u32 = 4096;
/// How a disagreement is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Mismatch,
    Drift,
    Inherited,
    /// A mismatch unless an order the bounded search could not try explains it.
    Undecided,
}

impl Engine {
    /// Replays steps in line order on a table only this task uses.
    pub(crate) fn direct(&mut self, ti: usize, c: &Call, steps: &[Step], nofile: u64) {
        self.run_in_order(ti, c, steps, Vec::new(), nofile);
    }

    /// Runs steps one after the other on the live table, counting and resyncing each.
    pub(crate) fn run_in_order(
        &mut self,
        ti: usize,
        c: &Call,
        steps: &[Step],
        mut held: Vec<u32>,
        nofile: u64,
    ) {
        let mut skip_install = false;
        for s in steps {
            if skip_install && matches!(s, Step::Install { .. }) {
                skip_install = false;
                continue;
            }
            let Some(t) = self.tables.get_mut(ti) else {
                return;
            };
            let chk = s.run(&mut t.files, &mut held, nofile, c.line);
            if !self.account(ti, c, s, chk, Exactness::Exact) && matches!(s, Step::ReserveAt { .. })
            {
                // The resync installed the logged fd; the reservation is gone.
                held.clear();
                skip_install = true;
            }
        }
    }

    /// Counts one check; on a disagreement, classifies it and resynchronises the table.
    /// Returns whether the library agreed.
    pub(crate) fn account(
        &mut self,
        ti: usize,
        c: &Call,
        s: &Step,
        chk: Check,
        how: Exactness,
    ) -> bool {
        if chk.ok() {
            if chk.counted {
                let row = self.stats.row(&c.name);
                row.checked += 1;
                row.matched += 1;
                match how {
                    Exactness::Exact => self.stats.exact += 1,
                    Exactness::Consistent => self.stats.consistent += 1,
                }
                match chk.expect {
                    Val::Fd(_) if !matches!(s, Step::Dup2 { .. } | Step::Dup3 { .. }) => {
                        self.stats.fds_predicted += 1
                    }
                    Val::Bit(_) => self.stats.cloexec_bits += 1,
                    Val::Err(fdtable::Errno::EBADF) => self.stats.ebadf += 1,
                    _ => {}
                }
            }
            return true;
        }
        let verdict = self.verdict(ti, c, s, chk);
        match verdict {
            Verdict::Mismatch => {
                let row = self.stats.row(&c.name);
                row.checked += 1;
                row.mismatched += 1;
                self.push_mismatch(
                    c,
                    chk.expect.to_string(),
                    chk.got.to_string(),
                    "value differs",
                );
            }
            Verdict::Drift => {
                self.stats.drift += 1;
                super::tasks::keep(
                    &mut self.stats.first_drift,
                    c,
                    chk.expect.to_string(),
                    chk.got.to_string(),
                );
            }
            Verdict::Undecided => {
                self.stats.undecided += 1;
                super::tasks::keep(
                    &mut self.stats.first_undecided,
                    c,
                    chk.expect.to_string(),
                    chk.got.to_string(),
                );
                let why = self.undecided.or_else(|| {
                    self.tables
                        .get(ti)
                        .and_then(|t| Some(t.unsettled.as_ref()?.0))
                });
                if let Some(why) = why {
                    self.stats.note(format!(
                        "disagreements on a shared table were left undecided: the search {why} \
                         (reported, not counted)"
                    ));
                }
            }
            Verdict::Inherited => {
                self.stats.inherited += 1;
                self.stats.note(format!(
                    "line {}: descriptors the call needed (below {}, or its argument) were open \
                     without a visible creation; taken as inherited (no meta file: initial \
                     descriptors assumed)",
                    c.line, chk.expect
                ));
            }
        }
        if verdict == Verdict::Undecided {
            // The model is a guess until the calls now in flight have returned.
            let ids = self.in_flight(ti);
            if let Some(t) = self.tables.get_mut(ti)
                && !ids.is_empty()
            {
                let (why, mut all) = t.unsettled.take().unwrap_or_default();
                all.extend(ids);
                t.unsettled = Some((self.undecided.unwrap_or(why), all));
            }
        }
        self.resync(ti, s, chk, c.line, verdict);
        false
    }

    fn verdict(&self, ti: usize, c: &Call, s: &Step, chk: Check) -> Verdict {
        let Some(t) = self.tables.get(ti) else {
            return Verdict::Mismatch;
        };
        if t.drifting || t.blind {
            return Verdict::Drift;
        }
        if self.init.assumed && self.inherited(t, s, chk) {
            return Verdict::Inherited;
        }
        if (self.undecided.is_some() || t.unsettled.is_some()) && self.explainable(ti, c, s, chk) {
            return Verdict::Undecided;
        }
        Verdict::Mismatch
    }

    /// Whether some other call in flight on table `ti` (or not yet committed in its history)
    /// could explain the disagreement of call `id`: an EBADF on a descriptor the model holds
    /// open needs one that may close or replace descriptors; a number above the lowest free,
    /// ones that may take at least as many numbers as it skipped; and so on. Conservative:
    /// any case not ruled out is explainable.
    fn explainable(&self, ti: usize, c: &Call, s: &Step, chk: Check) -> bool {
        let Some(t) = self.tables.get(ti) else {
            return true;
        };
        // A call that was itself in flight may be placed anywhere in its window, around
        // calls that have returned since (and whose history the search has given up).
        if c.entry_line < c.line {
            return true;
        }
        let id = c.id;
        let mut closer = false;
        let mut take: Option<u32> = Some(0);
        let mut add = |c: bool, n: Option<u32>| {
            closer |= c;
            take = match (take, n) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                _ => None,
            };
        };
        for task in self.tasks.values().filter(|k| k.table == ti) {
            if let Some(p) = task.pending.as_ref().filter(|p| p.id != id) {
                let (c, n) = crate::syscalls::in_flight_power(&p.name);
                add(c, n);
            }
        }
        let entry = t.hist.ops.get(&id).map_or(0, |o| o.entry);
        for o in t.hist.ops.values() {
            if o.id == id || (o.returned && o.result < entry) {
                continue;
            }
            for st in &o.steps {
                match st {
                    Step::Close { .. } | Step::CloseRange { .. } => add(true, Some(0)),
                    Step::Dup2 { .. } | Step::Dup3 { .. } | Step::DupFd { .. } => {
                        add(true, Some(1))
                    }
                    Step::Alloc { .. }
                    | Step::ReserveAt { .. }
                    | Step::Reserve
                    | Step::TryReserve
                    | Step::Dup { .. } => add(false, Some(1)),
                    _ => {}
                }
            }
        }
        let installed = |fd: u32| matches!(t.files.fd_state(fd), FdState::Installed { .. });
        match (s, chk.expect, chk.got) {
            // Closed meanwhile.
            (_, Val::Err(fdtable::Errno::EBADF), got) if got != Val::Err(fdtable::Errno::EBADF) => {
                closer
            }
            // Numbers skipped: held meanwhile by others.
            (
                Step::Alloc { .. } | Step::ReserveAt { .. } | Step::Dup { .. } | Step::DupFd { .. },
                Val::Fd(want),
                Val::Fd(got),
            ) if got < want => {
                if installed(want) && !closer {
                    return false;
                }
                let Some(cap) = take else {
                    return true;
                };
                let mut free = 0u32;
                for fd in got..want {
                    if t.files.fd_state(fd) == FdState::Free {
                        free += 1;
                        if free > cap {
                            return false;
                        }
                    }
                }
                true
            }
            // A number the model holds open: closed meanwhile.
            (
                Step::Alloc { .. } | Step::ReserveAt { .. } | Step::Dup { .. } | Step::DupFd { .. },
                Val::Fd(want),
                Val::Fd(_),
            ) => !installed(want) || closer,
            // Installed meanwhile: by a dup2 or F_DUPFD, or by creators taking the lowest
            // free numbers up to it.
            (Step::Close { fd, .. }, Val::Ok, Val::Err(fdtable::Errno::EBADF)) => {
                let Some(cap) = take else {
                    return true;
                };
                let mut free = 0u32;
                for n in 0..*fd {
                    if t.files.fd_state(n) == FdState::Free {
                        free += 1;
                        if free >= cap {
                            return closer;
                        }
                    }
                }
                closer || free < cap
            }
            // The table filled meanwhile.
            (_, Val::Err(fdtable::Errno::EMFILE), Val::Fd(_)) => take != Some(0) || closer,
            _ => true,
        }
    }

    /// With an assumed initial state, whether a disagreement is explained by descriptors
    /// the log never showed being open from the start (P10).
    fn inherited(&self, t: &super::table::Table, s: &Step, chk: Check) -> bool {
        let installed = |fd: u32| matches!(t.files.fd_state(fd), FdState::Installed { .. });
        match (s, chk.expect, chk.got) {
            // A new descriptor above the lowest free number: were the skipped numbers never
            // seen? (The numbers the log showed, not every number below `want`: the cost is
            // the log's, not the descriptor's.)
            (
                Step::Alloc { .. } | Step::ReserveAt { .. } | Step::Dup { .. } | Step::DupFd { .. },
                Val::Fd(want),
                Val::Fd(got),
            ) => {
                got < want
                    && self.touched.iter().all(|&fd| {
                        !(got..want).contains(&fd) || !self.touched_before(fd) || installed(fd)
                    })
            }
            // A descriptor used successfully, never seen before.
            (
                Step::Dup { fd, .. }
                | Step::DupFd { fd, .. }
                | Step::Dup2 { old: fd, .. }
                | Step::Dup3 { old: fd, .. },
                Val::Fd(_),
                Val::Err(fdtable::Errno::EBADF),
            )
            | (Step::Close { fd, .. }, Val::Ok, Val::Err(fdtable::Errno::EBADF)) => {
                !self.touched_before(*fd)
            }
            _ => false,
        }
    }

    /// The calls in flight on table `ti` that may touch it.
    pub(crate) fn in_flight(&self, ti: usize) -> Vec<u64> {
        self.tasks
            .values()
            .filter(|t| t.table == ti)
            .filter_map(|t| t.pending.as_ref())
            .filter(|p| super::may_touch_table(&p.name))
            .map(|p| p.id)
            .collect()
    }

    /// Ends the table's unsettled state once the calls it waits for have returned.
    pub(crate) fn settle(&mut self, ti: usize) {
        let now = self.in_flight(ti);
        if let Some(t) = self.tables.get_mut(ti)
            && let Some((_, ids)) = &mut t.unsettled
        {
            ids.retain(|id| now.contains(id));
            if ids.is_empty() {
                t.unsettled = None;
            }
        }
    }

    /// Whether the log showed `fd` allocated or closed before the current call.
    pub(crate) fn touched_before(&self, fd: u32) -> bool {
        self.touched.contains(&fd) && !self.fresh.contains(&fd)
    }

    /// An undecided result took `want`, which the model holds open: if a close of `want` is
    /// in flight, it happened first. Its effect is marked as placed, so that its result does
    /// not close the descriptor the resync installed (red team 35, N2).
    fn closed_by_pending(&mut self, ti: usize, want: u32) {
        let Some((tid, id, entry)) = self.tasks.iter().find_map(|(&tid, t)| {
            let p = t.pending.as_ref()?;
            let fd = p.partial.split([',', '<']).next()?;
            (t.table == ti && p.name == "close" && fd.trim().parse::<u32>().ok() == Some(want))
                .then_some((tid, p.id, p.entry))
        }) else {
            return;
        };
        let nofile = self.init.nofile;
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        let op = t.hist.ops.entry(id).or_insert_with(|| super::table::LinOp {
            id,
            tid,
            entry,
            result: u64::MAX / 2,
            returned: false,
            steps: vec![Step::Close {
                fd: want,
                expect: Val::Ok,
            }],
            nofile,
            base_placed: 0,
            base_held: Vec::new(),
            placed: 0,
            held: Vec::new(),
            checks: vec![None],
            exactness: Exactness::Exact,
            reordered: false,
        });
        op.placed = op.steps.len();
        op.base_placed = op.placed;
        op.checks = vec![None; op.steps.len()];
    }

    /// Makes the table agree with the log after a disagreement (P12's rules: a gap was taken
    /// invisibly, a reused number was closed invisibly).
    fn resync(&mut self, ti: usize, s: &Step, chk: Check, line: u64, verdict: Verdict) {
        self.stats.resyncs += 1;
        if verdict == Verdict::Undecided
            && let (Step::Alloc { .. } | Step::ReserveAt { .. }, Val::Fd(want)) = (s, chk.expect)
            && self
                .tables
                .get(ti)
                .is_some_and(|t| matches!(t.files.fd_state(want), FdState::Installed { .. }))
        {
            self.closed_by_pending(ti, want);
        }
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        let f = &mut t.files;
        let fill = if verdict == Verdict::Inherited {
            Kind::Inherited
        } else {
            Kind::Opaque
        };
        match (s, chk.expect, chk.got) {
            (Step::Alloc { .. } | Step::ReserveAt { .. }, Val::Fd(want), got) => {
                if let Val::Fd(g) = got {
                    if matches!(s, Step::ReserveAt { .. }) {
                        f.put_unused_fd(g);
                    } else {
                        let _ = f.close_fd(g);
                    }
                    // Bounded: a corrupt log must not make the replay allocate millions. An
                    // undecided gap is rather held by the calls in flight the search could
                    // not place: left free for them.
                    if g < want && want - g <= MAX_GAP && verdict != Verdict::Undecided {
                        for fd in g..want {
                            if f.fd_state(fd) == FdState::Free {
                                force_install(f, fd, fill, line);
                            }
                        }
                    }
                }
                force_install(f, want, Kind::Opaque, line);
            }
            (Step::Alloc { .. }, Val::Err(_), Val::Fd(g)) => {
                let _ = f.close_fd(g);
            }
            (Step::ReserveAt { .. }, Val::Err(_), Val::Fd(g)) => f.put_unused_fd(g),
            (
                Step::Dup { .. } | Step::DupFd { .. } | Step::Dup2 { .. } | Step::Dup3 { .. },
                Val::Fd(want),
                got,
            ) => {
                if let Val::Fd(g) = got
                    && g != want
                    && !matches!(s, Step::Dup2 { .. } | Step::Dup3 { .. })
                {
                    let _ = f.close_fd(g);
                }
                // The call succeeded, so its source was open: known from now on.
                let src = match s {
                    Step::Dup { fd, .. } | Step::DupFd { fd, .. } => *fd,
                    Step::Dup2 { old, .. } | Step::Dup3 { old, .. } => *old,
                    _ => want,
                };
                if src != want && !matches!(f.fd_state(src), FdState::Installed { .. }) {
                    force_install(f, src, fill, line);
                }
                if let Val::Fd(g) = got
                    && g < want
                    && want - g <= MAX_GAP
                    && verdict == Verdict::Inherited
                {
                    for fd in g..want {
                        if f.fd_state(fd) == FdState::Free {
                            force_install(f, fd, fill, line);
                        }
                    }
                }
                force_install(f, want, Kind::Opaque, line);
            }
            (Step::GetFd { fd, .. }, Val::Bit(b), _) => {
                if !matches!(f.fd_state(*fd), FdState::Installed { .. }) {
                    force_install(f, *fd, Kind::Opaque, line);
                }
                let _ = f.set_close_on_exec(*fd, b);
            }
            (Step::SetFd { fd, cloexec, .. }, Val::Ok, _) => {
                force_install(f, *fd, Kind::Opaque, line);
                let _ = f.set_close_on_exec(*fd, *cloexec);
            }
            _ => {}
        }
    }
}
