//! The text of a creating call, for `--track-fds` (`openat(AT_FDCWD, "out",
//! O_WRONLY|O_CREAT|O_TRUNC)`): paths are read from the program's memory, for display only.

use crate::mem;

fn quote(p: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(p))
}

fn path(tid: i32, ptr: u64) -> String {
    mem::read_path(tid, ptr).map_or_else(|| format!("{ptr:#x}"), |p| quote(&p))
}

fn dirfd(v: u64) -> String {
    match v as u32 as i32 {
        libc::AT_FDCWD => "AT_FDCWD".to_string(),
        d => d.to_string(),
    }
}

/// Open flags as strace prints them.
pub fn open_flags(f: u64) -> String {
    let mut v = vec![
        match f & 3 {
            0 => "O_RDONLY",
            1 => "O_WRONLY",
            _ => "O_RDWR",
        }
        .to_string(),
    ];
    for (bit, name) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_NOCTTY, "O_NOCTTY"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_NONBLOCK, "O_NONBLOCK"),
        (libc::O_DIRECTORY, "O_DIRECTORY"),
        (libc::O_NOFOLLOW, "O_NOFOLLOW"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
        (libc::O_PATH, "O_PATH"),
    ] {
        if f & bit as u64 != 0 {
            v.push(name.to_string());
        }
    }
    v.join("|")
}

/// The call `name` of task `tid` with these arguments.
pub fn call(tid: i32, name: &str, a: &[u64; 6]) -> String {
    match name {
        "open" => format!("open({}, {})", path(tid, a[0]), open_flags(a[1])),
        "creat" => format!("creat({})", path(tid, a[0])),
        "openat" => format!(
            "openat({}, {}, {})",
            dirfd(a[0]),
            path(tid, a[1]),
            open_flags(a[2])
        ),
        "openat2" => format!("openat2({}, {}, ...)", dirfd(a[0]), path(tid, a[1])),
        "open_tree" | "open_tree_attr" | "fspick" => {
            format!("{name}({}, {}, ...)", dirfd(a[0]), path(tid, a[1]))
        }
        "mq_open" => format!("mq_open({}, ...)", path(tid, a[0])),
        "fsopen" => format!("fsopen({})", path(tid, a[0])),
        "memfd_create" => format!("memfd_create({}, ...)", path(tid, a[0])),
        "socket" | "socketpair" => format!("{name}({}, {}, {})", a[0], a[1], a[2]),
        "accept" | "accept4" | "recvmsg" | "recvmmsg" | "fsmount" | "pidfd_getfd"
        | "open_by_handle_at" => format!("{name}({}, ...)", a[0] as u32 as i32),
        "ioctl" => format!("ioctl({}, {:#x}, ...)", a[0] as u32 as i32, a[1] as u32),
        "pidfd_open" => format!("pidfd_open({})", a[0] as u32 as i32),
        _ => format!("{name}()"),
    }
}
