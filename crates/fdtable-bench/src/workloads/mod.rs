//! The workloads, one module per kernel patch's experiment.

pub mod chat;
pub mod dd;
pub mod dup;
pub mod ioctl;
pub mod lookup;
pub mod open1;
pub mod openneg;
pub(crate) mod qsbr;

use crate::output::Row;
use crate::suite::Workload;

/// Every workload, in run order.
pub fn all() -> Vec<Workload> {
    vec![
        lookup::LIGHT,
        lookup::SHARED,
        dd::DD,
        openneg::OPENNEG,
        open1::OPEN1,
        dup::DUP1,
        dup::FIND_NEXT_FD,
        ioctl::IOCTL,
        chat::CHAT,
    ]
}

/// A `finish` hook that does nothing.
pub fn no_finish(_: &mut [Row]) {}

/// The fds every table starts with (stdin, stdout, stderr), as a will-it-scale task inherits.
pub const STDIO_FDS: u32 = 3;
