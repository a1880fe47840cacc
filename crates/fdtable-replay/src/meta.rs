//! The sidecar `NAME.meta.json` beside a log (P10, P11): the descriptors the root started with
//! (`initial_fds`: an object keyed by fd number, or a list) and its RLIMIT_NOFILE
//! (`rlimit_nofile`: `[soft, hard]` or a number). Anything else in them is an error, never a
//! silent default: the file must be an object, each descriptor a distinct number below
//! `fs.nr_open`, each limit a non-negative integer (a soft limit at most the hard one).

use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a meta file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Descriptors open at the start.
    pub initial_fds: Option<Vec<u32>>,
    /// Soft RLIMIT_NOFILE.
    pub nofile: Option<u64>,
}

/// The meta file of a log: `dir/NAME.meta.json` for `dir/NAME.strace[.gz]`.
pub fn meta_path(log: &Path) -> PathBuf {
    let mut name = log
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for ext in [".gz", ".strace", ".log", ".txt"] {
        if let Some(s) = name.strip_suffix(ext) {
            name = s.to_string();
        }
    }
    log.with_file_name(format!("{name}.meta.json"))
}

/// Parses a meta file's text.
pub fn parse(text: &str) -> Result<Meta, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if !v.is_object() {
        return Err(format!("not a JSON object: `{}`", shorten(&v)));
    }
    let initial_fds = match v.get("initial_fds") {
        Some(Value::Object(m)) => {
            let mut fds = m
                .keys()
                .map(|k| k.trim().parse::<u32>().map_err(|_| format!("bad fd `{k}`")))
                .collect::<Result<Vec<_>, _>>()?;
            fds.sort_unstable();
            Some(fds)
        }
        Some(Value::Array(a)) => {
            let mut fds = a
                .iter()
                .map(|x| {
                    x.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| format!("bad fd `{x}`"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            fds.sort_unstable();
            Some(fds)
        }
        Some(Value::Null) | None => None,
        Some(other) => return Err(format!("bad initial_fds `{}`", shorten(other))),
    };
    if let Some(fds) = &initial_fds {
        if let Some(w) = fds.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("initial_fds lists fd {} twice", w[0]));
        }
        let max = fdtable::nr_open();
        if let Some(fd) = fds.iter().find(|&&fd| fd as usize >= max) {
            return Err(format!(
                "initial fd {fd} is beyond fs.nr_open ({max}), the largest table there is"
            ));
        }
    }
    let nofile = match v.get("rlimit_nofile") {
        Some(Value::Array(a)) => match a.as_slice() {
            [soft, hard] => match (soft.as_u64(), hard.as_u64()) {
                (Some(s), Some(h)) if s <= h => Some(s),
                _ => return Err(bad_limit(&v)),
            },
            _ => return Err(bad_limit(&v)),
        },
        Some(Value::Number(n)) => Some(n.as_u64().ok_or_else(|| bad_limit(&v))?),
        Some(Value::Null) | None => None,
        Some(_) => return Err(bad_limit(&v)),
    };
    Ok(Meta {
        initial_fds,
        nofile,
    })
}

fn bad_limit(v: &Value) -> String {
    let l = v.get("rlimit_nofile").unwrap_or(&Value::Null);
    format!(
        "bad rlimit_nofile `{}` (a non-negative integer, or [soft, hard] with soft <= hard)",
        shorten(l)
    )
}

/// A JSON value for a message, shortened.
fn shorten(v: &Value) -> String {
    crate::parse::join::shorten(&v.to_string())
}

/// Reads the meta file beside `log`, if there is one.
pub fn load(log: &Path) -> Result<Option<Meta>, String> {
    let p = meta_path(log);
    match std::fs::read_to_string(&p) {
        Ok(t) => parse(&t)
            .map(Some)
            .map_err(|e| format!("{}: {e}", p.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let m = parse(
            r#"{"initial_fds": {"0": "a", "2": "b", "1": "c"}, "rlimit_nofile": [20000, 20000]}"#,
        )
        .unwrap();
        assert_eq!(m.initial_fds, Some(vec![0, 1, 2]));
        assert_eq!(m.nofile, Some(20000));
        let m = parse(r#"{"initial_fds": [0, 1], "rlimit_nofile": 64}"#).unwrap();
        assert_eq!((m.initial_fds, m.nofile), (Some(vec![0, 1]), Some(64)));
        assert!(parse("{").is_err());
        assert_eq!(
            parse(r#"{"rlimit_nofile": null}"#).unwrap(),
            Meta::default()
        );
        assert_eq!(
            meta_path(Path::new("/x/a.strace.gz")),
            PathBuf::from("/x/a.meta.json")
        );
    }

    #[test]
    fn what_is_not_a_meta_file_is_an_error() {
        let bad = [
            "[]",
            r#""x""#,
            "null",
            "3",
            r#"{"rlimit_nofile": -5}"#,
            r#"{"rlimit_nofile": "abc"}"#,
            r#"{"rlimit_nofile": []}"#,
            r#"{"rlimit_nofile": [-1, 5]}"#,
            r#"{"rlimit_nofile": [5]}"#,
            r#"{"rlimit_nofile": [10, 5]}"#,
            r#"{"rlimit_nofile": 1e30}"#,
            r#"{"rlimit_nofile": 2.5}"#,
            r#"{"rlimit_nofile": {"soft": 5}}"#,
            r#"{"initial_fds": [0, 0, 0, 1, 1, 2]}"#,
            r#"{"initial_fds": {"1": "a", " 1": "b"}}"#,
            r#"{"initial_fds": [4294967295]}"#,
            r#"{"initial_fds": [2147483647]}"#,
        ];
        for text in bad {
            assert!(parse(text).is_err(), "{text}");
        }
        let top = fdtable::nr_open() - 1;
        let m = parse(&format!(
            r#"{{"initial_fds": [{top}], "rlimit_nofile": [0, 0]}}"#
        ))
        .unwrap();
        assert_eq!((m.initial_fds, m.nofile), (Some(vec![top as u32]), Some(0)));
    }
}
