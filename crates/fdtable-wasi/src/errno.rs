//! The one mapping from Linux errnos to WASI's lives in `fdtable-wasi-types`
//! ([`LINUX_TO_WASI`], with `From<fdtable::Errno>` and `From<&std::io::Error>` for
//! [`WasiErrno`](crate::types::WasiErrno)): the table, the host-error rule (macOS's numbers
//! first become Linux's) and cap-std's path escape (`Notcapable`) are documented there.

pub use fdtable_wasi_types::LINUX_TO_WASI;
