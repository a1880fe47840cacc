//! The sidecar `NAME.meta.json` beside a log (P10, P11): the descriptors the root started with
//! (`initial_fds`: an object keyed by fd number, or a list) and its RLIMIT_NOFILE
//! (`rlimit_nofile`: `[soft, hard]` or a number).

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
        Some(other) => return Err(format!("bad initial_fds `{other}`")),
    };
    let nofile = match v.get("rlimit_nofile") {
        Some(Value::Array(a)) => a.first().and_then(Value::as_u64),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    };
    Ok(Meta {
        initial_fds,
        nofile,
    })
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
            meta_path(Path::new("/x/a.strace.gz")),
            PathBuf::from("/x/a.meta.json")
        );
    }
}
