//! Reading strace logs: lines ([`line`](mod@line)), arguments ([`scan`]), return values ([`ret`]),
//! joining split calls ([`join`]) and the sources they come from ([`source`]).
//!
//! Parsing never panics on bad input: every malformed or truncated line becomes an
//! [`join::Event::Error`] that names its line number, and the replay goes on.

pub mod join;
pub mod line;
pub mod ret;
pub mod scan;
pub mod source;

pub use join::{Call, Event, Joiner};
pub use ret::Ret;
pub use source::{Line, LineReader, MAX_LINE_BYTES, Source};
