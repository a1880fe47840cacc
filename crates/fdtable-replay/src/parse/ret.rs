//! Return values (P1): `0`, `0x1 (flags FD_CLOEXEC)` (hex before decimal), `3</path>`,
//! `20</memfd:x>(deleted)`, `-1 ENOENT (No such file or directory)`, `? ERESTARTSYS (...)`,
//! and `?` alone (exit, or a task killed inside the call). A pid translated by
//! `--pidns-translation` (`2 /* 7353 in strace's PID NS */`) is strace's: the number the
//! task prefixes use.

use super::line::LineError;
use super::scan;
use fdtable::Errno;

/// What a call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// A non-error value (an fd, a count, an address, a pid...).
    Val(i64),
    /// `-1 EXXX`: the error. Names this crate does not know map to their `(errno N)` value or
    /// to [`Ret::unknown_errno`].
    Err(Errno),
    /// `? ERESTART*`: interrupted, to be restarted; the call had no effect.
    Restart,
    /// `?`: no value (exit, or the task died inside the call).
    Unknown,
}

impl Ret {
    /// The stand-in for an errno whose name and number strace did not give.
    pub fn unknown_errno() -> Errno {
        Errno::new(4095)
    }

    /// The value if the call succeeded.
    pub fn ok(self) -> Option<i64> {
        match self {
            Ret::Val(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the call succeeded.
    pub fn is_ok(self) -> bool {
        matches!(self, Ret::Val(_))
    }

    /// The errno if the call failed with one.
    pub fn err(self) -> Option<Errno> {
        match self {
            Ret::Err(e) => Some(e),
            _ => None,
        }
    }
}

/// Parses the text after ` = `.
pub fn parse_ret(s: &str) -> Result<Ret, LineError> {
    let s = s.trim();
    if let Some(r) = s.strip_prefix('?') {
        return Ok(if r.trim_start().starts_with("ERESTART") {
            Ret::Restart
        } else {
            Ret::Unknown
        });
    }
    let Some(v) = scan::leading_int(s) else {
        return Err(LineError(format!("bad return value `{s}`")));
    };
    // The text after the number (and its decoration, if any).
    let num_len = s
        .bytes()
        .enumerate()
        .skip(usize::from(s.starts_with('-')))
        .take_while(|(_, b)| b.is_ascii_hexdigit() || *b == b'x' || *b == b'X')
        .count()
        + usize::from(s.starts_with('-'));
    let mut rest = &s[num_len..];
    if rest.starts_with('<') {
        match scan::skip_decoration(rest.as_bytes(), 0) {
            Some(end) => rest = &rest[end..],
            None => return Err(LineError("unterminated decoration on return value".into())),
        }
    }
    let rest = rest.trim_start();
    if v < 0 {
        let name = rest.split([' ', '(']).next().unwrap_or("");
        if let Some(e) = Errno::from_name(name) {
            return Ok(Ret::Err(e));
        }
        // `E??? (errno 530)` or a name we do not know.
        let num = rest
            .find("(errno ")
            .and_then(|i| scan::leading_int(&rest[i + 7..]));
        return Ok(Ret::Err(match num {
            Some(n) if (1..4096).contains(&n) => Errno::new(n as i32),
            _ if v > -4096 && name.is_empty() => Errno::new((-v) as i32),
            _ => Ret::unknown_errno(),
        }));
    }
    // A pid from another namespace, translated to strace's.
    if let Some(c) = rest.strip_prefix("/* ")
        && let Some(n) = c.strip_suffix(" in strace's PID NS */")
        && let Ok(pid) = n.trim().parse::<u32>()
    {
        return Ok(Ret::Val(i64::from(pid)));
    }
    Ok(Ret::Val(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse_ret("0").unwrap(), Ret::Val(0));
        assert_eq!(parse_ret("0x1 (flags FD_CLOEXEC)").unwrap(), Ret::Val(1));
        assert_eq!(parse_ret("3</etc/ld.so.cache>").unwrap(), Ret::Val(3));
        assert_eq!(
            parse_ret("20</memfd:probe>(deleted)").unwrap(),
            Ret::Val(20)
        );
        assert_eq!(
            parse_ret("-1 ENOENT (No such file or directory)").unwrap(),
            Ret::Err(Errno::ENOENT)
        );
        assert_eq!(
            parse_ret("? ERESTARTSYS (To be restarted if SA_RESTART is set)").unwrap(),
            Ret::Restart
        );
        assert_eq!(parse_ret("?").unwrap(), Ret::Unknown);
        assert_eq!(
            parse_ret("0x7f9d3e00e000").unwrap(),
            Ret::Val(0x7f9d3e00e000)
        );
        assert_eq!(
            parse_ret("-1 E??? (errno 530)").unwrap(),
            Ret::Err(Errno::new(530))
        );
        // Names the library does not know keep their value.
        assert_eq!(
            parse_ret("-1 ESRCH (No such process)").unwrap(),
            Ret::Err(Errno::new(libc::ESRCH))
        );
        assert_eq!(
            parse_ret("-1 EINPROGRESS (Operation now in progress)").unwrap(),
            Ret::Err(Errno::new(libc::EINPROGRESS))
        );
        assert_eq!(
            parse_ret("2 /* 7353 in strace's PID NS */").unwrap(),
            Ret::Val(7353)
        );
        assert!(parse_ret("x").is_err());
        assert!(parse_ret("3</never").is_err());
    }
}
