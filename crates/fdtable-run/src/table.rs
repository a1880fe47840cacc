//! What the supervisor keeps beside each `fdtable::Files` table: the open file descriptions
//! the library refcounts ([`Desc`]) and, per descriptor number, the real descriptor in the
//! tracee's private range and the call that created it ([`FdMap`]).
//!
//! The library's table is authoritative: which numbers are open, reserved or free, their
//! close-on-exec bits, every fd number a call returns and every table errno. The map only
//! translates: it holds an entry exactly for the installed descriptors (and, for a moment, for
//! the number a dup in flight will fill).

use fdtable::FileLike;
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

/// An open file description, as the library's table refers to it. The kernel holds the real
/// one; this records what the supervisor must know about it.
#[derive(Debug)]
pub struct Desc {
    /// What it is.
    pub kind: DescKind,
    /// The position of an emulated directory listing (`getdents64` on a [`DescKind::FdDir`]).
    pub pos: Mutex<i64>,
    /// For a [`DescKind::Plain`] description: whether its real file turned out to be a
    /// descriptor directory of a traced task (reached through a path the supervisor did not
    /// recognise), found at its first listing.
    pub listed: OnceLock<Option<DescKind>>,
}

/// The kinds of description the supervisor treats differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescKind {
    /// Everything the kernel handles alone.
    Plain,
    /// A `/proc/<pid>/fd` (or `fdinfo`) directory: its listing is the library's table of
    /// task `tid`, not the real one.
    FdDir {
        /// The task whose descriptors it lists.
        tid: i32,
        /// `fdinfo` rather than `fd`.
        info: bool,
    },
}

impl Desc {
    /// A description of `kind`.
    pub fn new(kind: DescKind) -> Desc {
        Desc {
            kind,
            pos: Mutex::new(0),
            listed: OnceLock::new(),
        }
    }
}

impl FileLike for Desc {}

/// The call that created a descriptor, for `--track-fds`.
#[derive(Debug)]
pub struct Origin {
    /// The call, decoded (`openat(AT_FDCWD, "/etc/passwd", O_RDONLY)`), or
    /// `<inherited from parent>`.
    pub call: String,
    /// The process that made it (0 for the descriptors `fdtable run` was given).
    pub pid: i32,
    /// For a duplicate (dup, dup2, F_DUPFD...): the call that created the original.
    pub from: Option<Rc<Origin>>,
}

impl Origin {
    /// The call that created the open file description itself (through any duplicates).
    pub fn root(self: &Rc<Origin>) -> Rc<Origin> {
        self.from.clone().unwrap_or_else(|| self.clone())
    }
}

/// One descriptor number's translation.
#[derive(Clone, Debug)]
pub enum Slot {
    /// The real descriptor in the tracee's private range.
    Real {
        /// Its number.
        real: i32,
        /// The call that created this descriptor number.
        origin: Rc<Origin>,
    },
    /// The library installed this number (dup2, F_DUPFD, ...), and the real call that gives it
    /// a real descriptor is in flight; `token` identifies that call.
    Pending {
        /// Identifies the call in flight.
        token: u64,
        /// The call that created this descriptor number.
        origin: Rc<Origin>,
    },
}

impl Slot {
    /// The creating call.
    pub fn origin(&self) -> &Rc<Origin> {
        match self {
            Slot::Real { origin, .. } | Slot::Pending { origin, .. } => origin,
        }
    }
}

/// The translation of one table (shared by the tasks that share the table).
#[derive(Clone, Debug, Default)]
pub struct FdMap {
    slots: Vec<Option<Slot>>,
    /// Real descriptors in the private range that no number maps to any more and that the
    /// supervisor must close in the tracee at its next stop (after a fork or exec raced with
    /// another thread, or a close-on-exec bit the kernel did not have).
    pub orphans: Vec<i32>,
    /// Some close-on-exec bit was set by the library only (`close_range(CLOSE_RANGE_CLOEXEC)`):
    /// the next exec must compare the real table with the library's.
    pub cloexec_unsynced: bool,
    /// How many placeholders fill the bottom of the real table (numbers `0..placeholders`);
    /// every real descriptor is above them.
    pub placeholders: i32,
    /// The placeholders from this number up must be closed at the next stop: a process
    /// raised its soft limit beyond what the real table holds above them.
    pub shrink_to: Option<i32>,
}

impl FdMap {
    /// The slot of `fd`.
    pub fn get(&self, fd: u32) -> Option<&Slot> {
        self.slots.get(fd as usize)?.as_ref()
    }

    /// The real descriptor `fd` translates to, if it has one.
    pub fn real(&self, fd: u32) -> Option<i32> {
        match self.get(fd)? {
            Slot::Real { real, .. } => Some(*real),
            Slot::Pending { .. } => None,
        }
    }

    /// Sets the slot of `fd`, returning what it held.
    pub fn set(&mut self, fd: u32, slot: Slot) -> Option<Slot> {
        let i = fd as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        self.slots[i].replace(slot)
    }

    /// Empties the slot of `fd`, returning what it held.
    pub fn take(&mut self, fd: u32) -> Option<Slot> {
        self.slots.get_mut(fd as usize)?.take()
    }

    /// Every (number, slot), ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Slot)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i as u32, s)))
    }

    /// Every real descriptor the map holds.
    pub fn reals(&self) -> Vec<i32> {
        self.iter()
            .filter_map(|(_, s)| match s {
                Slot::Real { real, .. } => Some(*real),
                Slot::Pending { .. } => None,
            })
            .collect()
    }

    /// Number of slots in use.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether no slot is in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_basics() {
        let o = Rc::new(Origin {
            call: "x".into(),
            pid: 1,
            from: None,
        });
        let mut m = FdMap::default();
        assert!(m.is_empty());
        m.set(
            5,
            Slot::Real {
                real: 100,
                origin: o.clone(),
            },
        );
        m.set(
            2,
            Slot::Pending {
                token: 1,
                origin: o,
            },
        );
        assert_eq!(m.real(5), Some(100));
        assert_eq!(m.real(2), None);
        assert_eq!(m.real(9), None);
        assert_eq!(m.iter().map(|(f, _)| f).collect::<Vec<_>>(), vec![2, 5]);
        assert_eq!(m.reals(), vec![100]);
        assert!(m.take(5).is_some());
        assert_eq!(m.len(), 1);
    }
}
