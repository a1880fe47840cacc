//! A structure-aware scanner for strace argument text.
//!
//! Argument text contains `(`, `)`, `,` and ` = ` in places that are not syntax: inside
//! `"strings"` (with `\"` escapes, possibly followed by `...`), `/* comments */`, `[...]`
//! arrays, `{...}` structures, and the `-y` decorations `3</path>` that may nest
//! (`0</dev/null<char 1:3>>`) and contain `->` (`14<TCP:[1.2.3.4:5->6.7.8.9:10]>`).
//! `1<<CAP_CHOWN` is a shift, not a decoration. Every function here walks the text once,
//! byte by byte, and never panics: unterminated constructs make it return `None`.

/// Walks `s` from `start`, calling `at_top(i, byte)` for every byte that sits at nesting depth
/// zero outside strings, comments and decorations. Stops when `at_top` returns `true` (and
/// returns that index) or at a closing bracket that would take the depth below zero (returns
/// its index). Returns `None` if the text ends first, or ends inside a construct.
fn walk(s: &[u8], start: usize, mut at_top: impl FnMut(usize, u8) -> bool) -> Option<usize> {
    let mut depth: usize = 0;
    let mut i = start;
    while i < s.len() {
        let c = s[i];
        match c {
            b'"' => {
                i = skip_string(s, i)?;
                continue;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                i = skip_comment(s, i)?;
                continue;
            }
            b'<' if starts_decoration(s, i) => {
                i = skip_decoration(s, i)?;
                continue;
            }
            b'(' | b'[' | b'{' => {
                if depth == 0 && at_top(i, c) {
                    return Some(i);
                }
                depth += 1;
            }
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return Some(i);
                }
                depth -= 1;
            }
            _ => {
                if depth == 0 && at_top(i, c) {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

/// `s[i]` is `"`: the index just past the closing quote.
fn skip_string(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// `s[i..]` starts with `/*`: the index just past `*/`.
fn skip_comment(s: &[u8], i: usize) -> Option<usize> {
    let rest = s.get(i + 2..)?;
    rest.windows(2)
        .position(|w| w == b"*/")
        .map(|p| i + 2 + p + 2)
}

/// Whether the `<` at `s[i]` opens a `-y` decoration: it follows a decimal fd number or
/// `AT_FDCWD`, and is not the first half of a `<<` shift.
fn starts_decoration(s: &[u8], i: usize) -> bool {
    if i == 0 || s.get(i + 1) == Some(&b'<') || s.get(i + 1).is_none() {
        return false;
    }
    let prev = s[i - 1];
    if prev.is_ascii_digit() {
        // A decimal number (not the tail of a hex literal or an identifier).
        let mut j = i;
        while j > 0 && s[j - 1].is_ascii_digit() {
            j -= 1;
        }
        return j == 0 || !(s[j - 1].is_ascii_alphanumeric() || s[j - 1] == b'_');
    }
    s[..i].ends_with(b"AT_FDCWD")
}

/// `s[i]` is the `<` of a decoration: the index just past its closing `>`.
///
/// Inside a decoration, `\` escapes the next byte, a raw `<` opens a nested decoration, and a
/// `>` closes one, except for the `->` of a socket's `[local->peer]` inside brackets (only in
/// decorations that are not paths: a path escapes `<` and `>`, but may contain `[`).
pub(crate) fn skip_decoration(s: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    // One entry per open decoration: whether it is a path, and its bracket depth.
    let mut stack: Vec<(bool, usize)> = Vec::new();
    let mut j = i;
    while j < s.len() {
        let c = s[j];
        match c {
            b'<' => {
                depth += 1;
                stack.push((s.get(j + 1) == Some(&b'/'), 0));
            }
            b'>' => {
                let arrow = j > 0 && s[j - 1] == b'-';
                let in_brackets = stack.last().is_some_and(|&(path, b)| !path && b > 0);
                if !(arrow && in_brackets) {
                    depth -= 1;
                    stack.pop();
                    if depth == 0 {
                        return Some(j + 1);
                    }
                }
            }
            b'\\' => j += 1,
            b'[' => {
                if let Some((false, b)) = stack.last_mut() {
                    *b += 1;
                }
            }
            b']' => {
                if let Some((false, b)) = stack.last_mut() {
                    *b = b.saturating_sub(1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// `s` is the text after a call's `(`: the index of the matching `)`.
pub fn find_call_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let end = walk(b, 0, |_, _| false)?;
    (b[end] == b')').then_some(end)
}

/// Splits an argument list (the text between a call's parentheses, or between the brackets
/// of an array or structure) at its top-level commas, trimming each piece. An empty text
/// yields no pieces. Returns `None` if a string, comment, bracket or decoration is left open.
pub fn split_top(s: &str) -> Option<Vec<&str>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    loop {
        match walk(b, i, |_, c| c == b',') {
            Some(j) if b[j] == b',' => {
                out.push(s[from..j].trim());
                from = j + 1;
                i = j + 1;
            }
            // A closing bracket with nothing open: unbalanced.
            Some(_) => return None,
            None => {
                // `walk` returns None both at the end of clean text and inside an open construct;
                // tell them apart by checking the tail on its own.
                if !balanced(&b[from..]) {
                    return None;
                }
                let last = s[from..].trim();
                if !(last.is_empty() && out.is_empty()) {
                    out.push(last);
                }
                return Some(out);
            }
        }
    }
}

/// Whether `s` closes every construct it opens.
fn balanced(s: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'"' => match skip_string(s, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => return false,
            },
            b'/' if s.get(i + 1) == Some(&b'*') => match skip_comment(s, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => return false,
            },
            b'<' if starts_decoration(s, i) => match skip_decoration(s, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => return false,
            },
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    depth == 0
}

/// The inside of a bracketed value: `[a, b]` → `a, b`, `{x=1}` → `x=1`. `None` if `s` is not
/// one bracketed value.
pub fn inner(s: &str, open: u8, close: u8) -> Option<&str> {
    let b = s.as_bytes();
    if b.first() != Some(&open) {
        return None;
    }
    let end = walk(b, 1, |_, _| false)?;
    (b[end] == close && end == b.len() - 1).then(|| &s[1..end])
}

/// Every value of a `key=value` field anywhere in `s` (at any nesting depth, outside strings,
/// comments and decorations), in order. The value runs to the next top-level `,` or closing
/// bracket of its own level.
pub fn fields<'a>(s: &'a str, key: &str) -> Vec<&'a str> {
    let b = s.as_bytes();
    let kb = key.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => match skip_string(b, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => break,
            },
            b'/' if b.get(i + 1) == Some(&b'*') => match skip_comment(b, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => break,
            },
            b'<' if starts_decoration(b, i) => match skip_decoration(b, i) {
                Some(j) => {
                    i = j;
                    continue;
                }
                None => break,
            },
            _ => {}
        }
        let boundary = i == 0 || matches!(b[i - 1], b'{' | b'[' | b'(' | b' ' | b',');
        if boundary && b[i..].starts_with(kb) && b.get(i + kb.len()) == Some(&b'=') {
            let v0 = i + kb.len() + 1;
            let end = walk(b, v0, |_, c| c == b',').unwrap_or(b.len());
            out.push(s[v0..end].trim());
            i = v0;
            continue;
        }
        i += 1;
    }
    out
}

/// The first value of field `key` (see [`fields`]).
pub fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    fields(s, key).into_iter().next()
}

/// The `|`-separated symbolic flags of a flags value (`O_RDONLY|O_CLOEXEC`).
pub fn has_flag(value: &str, flag: &str) -> bool {
    value.split('|').any(|f| f.trim() == flag)
}

/// A leading integer: decimal (possibly negative) or `0x` hex, ignoring a `-y` decoration or
/// any other text after it. `None` if `s` does not start with a number.
pub fn leading_int(s: &str) -> Option<i64> {
    let s = s.trim_start();
    let (neg, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let n = h.bytes().take_while(u8::is_ascii_hexdigit).count();
        if n == 0 {
            return None;
        }
        u64::from_str_radix(&h[..n], 16).ok()? as i64
    } else {
        let n = t.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        // Values past i64 (unsigned 64-bit results) wrap like the kernel's long.
        t[..n]
            .parse::<i64>()
            .ok()
            .or_else(|| t[..n].parse::<u64>().ok().map(|v| v as i64))?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A descriptor argument: a non-negative integer that fits an `int` (decorations ignored).
/// `AT_FDCWD`, `-1` and non-numbers give `None`.
pub fn fd_arg(s: &str) -> Option<u32> {
    let v = leading_int(s)?;
    (0..=i32::MAX as i64).contains(&v).then_some(v as u32)
}

/// The descriptors of an fd array `[3, 4]` (decorations allowed). `None` if `s` is not an
/// array, or an element is not a number (`[...]` when `-s 0` hid them, or a truncated array).
pub fn fd_array(s: &str) -> Option<Vec<u32>> {
    let body = inner(s.trim(), b'[', b']')?;
    split_top(body)?.into_iter().map(fd_arg).collect()
}

/// A numeric value as strace prints limits and sizes: decimal or hex, a product such as
/// `8192*1024`, or `RLIM64_INFINITY` / `RLIM_INFINITY` (as `u64::MAX`).
pub fn limit_value(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.contains("INFINITY") {
        return Some(u64::MAX);
    }
    let mut acc: u64 = 1;
    for part in s.split('*') {
        let v = leading_int(part)?;
        acc = acc.checked_mul(u64::try_from(v).ok()?)?;
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_end_skips_strings_comments_and_decorations() {
        let s = r#"3</a(b)>, "x)\")", /* ) */ [{WIFEXITED(s) && WEXITSTATUS(s) == 0}]) = 1"#;
        let end = find_call_end(s).unwrap();
        assert_eq!(&s[end..], ") = 1");
        let s = "14<TCP:[127.0.0.1:47259->127.0.0.1:33396]>, 1) = 0";
        assert_eq!(&s[find_call_end(s).unwrap()..], ") = 0");
        let s = "0</dev/null<char 1:3>>) = 0";
        assert_eq!(&s[find_call_end(s).unwrap()..], ") = 0");
        let s = "{effective=1<<CAP_CHOWN|1<<CAP_KILL}) = 0";
        assert_eq!(&s[find_call_end(s).unwrap()..], ") = 0");
        assert_eq!(find_call_end(r#""unterminated"#), None);
        assert_eq!(find_call_end("[1, 2"), None);
    }

    #[test]
    fn split_and_fields() {
        let a = split_top(r#"AT_FDCWD, "/a,b", O_RDONLY|O_CLOEXEC"#).unwrap();
        assert_eq!(a, vec!["AT_FDCWD", "\"/a,b\"", "O_RDONLY|O_CLOEXEC"]);
        assert_eq!(split_top("").unwrap(), Vec::<&str>::new());
        assert_eq!(split_top("a, (b"), None);
        let m =
            "{msg_control=[{cmsg_len=48, cmsg_type=SCM_RIGHTS, cmsg_data=[8, 9]}], msg_flags=0}";
        assert_eq!(field(m, "cmsg_data"), Some("[8, 9]"));
        assert_eq!(fd_array("[8<pipe:[1]>, 9]"), Some(vec![8, 9]));
        assert_eq!(fd_array("[...]"), None);
        assert_eq!(
            field(r#"{a="x, msg_flags=1", msg_flags=2}"#, "msg_flags"),
            Some("2")
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(leading_int("0x1 (flags FD_CLOEXEC)"), Some(1));
        assert_eq!(leading_int("-1 ENOENT"), Some(-1));
        assert_eq!(leading_int("3</x>"), Some(3));
        assert_eq!(fd_arg("AT_FDCWD"), None);
        assert_eq!(fd_arg("-1"), None);
        assert_eq!(limit_value("8192*1024"), Some(8 << 20));
        assert_eq!(limit_value("RLIM64_INFINITY"), Some(u64::MAX));
        assert_eq!(leading_int("18446744073709551615"), Some(-1));
    }
}
