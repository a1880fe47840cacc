//! `fdtable wasi` end to end: the guest's exit status, output, arguments, environment and
//! preopens, and clear errors for what cannot be run.

use std::process::Command;

const FDTABLE: &str = env!("CARGO_BIN_EXE_fdtable");

/// A command that writes its first argument's length and `$GREETING`'s value to stdout via
/// args/environ, then opens "data" in the preopen at fd 3, and exits with the fd it got.
const GUEST: &str = r#"
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 500) "data")
  (func (export "_start")
    ;; environ: pointers at 100, strings at 200; print the first one ("GREETING=hi").
    (drop (call $environ_get (i32.const 100) (i32.const 200)))
    (i32.store (i32.const 0) (i32.const 200))
    (i32.store (i32.const 4) (i32.const 11))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 20)))
    ;; path_open(3, "data") -> fd at 24; exit with errno*10 + fd.
    (i32.mul (call $path_open (i32.const 3) (i32.const 1) (i32.const 500) (i32.const 4)
                  (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 24))
             (i32.const 10))
    (i32.add (i32.load (i32.const 24)))
    (call $proc_exit)))
"#;

fn write_guest(dir: &std::path::Path, wat: &str) -> std::path::PathBuf {
    let p = dir.join("guest.wasm");
    std::fs::write(&p, wat::parse_str(wat).unwrap()).unwrap();
    p
}

#[test]
fn runs_a_guest_with_env_and_preopens() {
    let tmp = tempfile::tempdir().unwrap();
    let guest = write_guest(tmp.path(), GUEST);
    let data = tmp.path().join("pre");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("data"), b"x").unwrap();
    let out = Command::new(FDTABLE)
        .arg("wasi")
        .arg("--env")
        .arg("GREETING=hi")
        .arg("--dir")
        .arg(format!("{}::/", data.display()))
        .arg(&guest)
        .arg("--not-an-option-of-ours")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "GREETING=hi");
    // errno 0, fd 4: the lowest free after stdio and the preopen.
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without the preopen, fd 3 is not open: badf (8) * 10.
    let out = Command::new(FDTABLE)
        .args(["wasi", "--env", "GREETING=hi"])
        .arg(&guest)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(80));
}

#[test]
fn traps_and_unrunnable_programs_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let trap = write_guest(
        tmp.path(),
        r#"(module (memory (export "memory") 1) (func (export "_start") unreachable))"#,
    );
    let out = Command::new(FDTABLE)
        .arg("wasi")
        .arg(&trap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(134));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unreachable"));

    let text = tmp.path().join("script.sh");
    std::fs::write(&text, "#!/bin/sh\n").unwrap();
    let out = Command::new(FDTABLE)
        .arg("wasi")
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a WebAssembly module"));

    let out = Command::new(FDTABLE)
        .args(["wasi", "/nonexistent/prog.wasm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    let out = Command::new(FDTABLE)
        .args(["wasi", "--dir", "/nonexistent::/"])
        .arg(&trap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dir"));
}

/// A guest that recurses `depth` calls deep and exits 0 when the recursion returned; the
/// guest's stack must hold every frame.
fn deep_guest(dir: &std::path::Path, depth: u32) -> std::path::PathBuf {
    write_guest(
        dir,
        &format!(
            r#"(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func $f (param i32) (result i32)
    local.get 0
    i32.eqz
    if (result i32) i32.const 0
    else local.get 0 i32.const 1 i32.sub call $f i32.const 1 i32.add end)
  (func (export "_start") i32.const {depth} call $f i32.const {depth} i32.ne call $exit))"#
        ),
    )
}

#[test]
fn a_guest_has_the_wasm_stack_gos_runner_asks_for() {
    // 8 MiB, as Go's wasip1 runner asks of wasmtime: the engine's default (512 KiB) stopped
    // Go's deep-recursion tests with "wasm call stack exhausted" (the red team's round 34).
    // 100,000 frames need more than 512 KiB; a million need more than 8 MiB, and trap.
    let tmp = tempfile::tempdir().unwrap();
    let run = |depth| {
        Command::new(FDTABLE)
            .arg("wasi")
            .arg(deep_guest(tmp.path(), depth))
            .output()
            .unwrap()
    };
    let out = run(100_000);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(1_000_000);
    assert_eq!(out.status.code(), Some(134));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("call stack exhausted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The exit status of `fdtable wasi GUEST` with `stdin` as its standard input.
fn status_with_stdin(guest: &std::path::Path, stdin: std::process::Stdio) -> Option<i32> {
    let out = Command::new(FDTABLE)
        .arg("wasi")
        .arg(guest)
        .stdin(stdin)
        .output()
        .unwrap();
    out.status.code()
}

/// Exits with the WASI file type of its stdin (`fd_fdstat_get(0)`), plus 10 if it has the
/// `FD_SEEK` or `FD_TELL` right (wasi-libc's `isatty` is "a character device without them"),
/// or 100 + errno.
const STDIN_TYPE: &str = r#"
(module
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $e i32)
    (local.set $e (call $fdstat (i32.const 0) (i32.const 0)))
    (if (local.get $e) (then (call $proc_exit (i32.add (i32.const 100) (local.get $e)))))
    (call $proc_exit
      (i32.add (i32.load8_u (i32.const 0))
        (select (i32.const 10) (i32.const 0)
          (i64.ne (i64.and (i64.load (i32.const 8)) (i64.const 36)) (i64.const 0)))))))
"#;

#[test]
fn stdin_is_a_terminal_only_when_it_is_one_and_a_file_when_it_is_one() {
    let tmp = tempfile::tempdir().unwrap();
    let guest = write_guest(tmp.path(), STDIN_TYPE);
    let file = tmp.path().join("input");
    std::fs::write(&file, b"x").unwrap();
    let stdin_type = |stdin: std::process::Stdio| status_with_stdin(&guest, stdin);
    // `/dev/null` is the character device it is, with seek rights: not a terminal to
    // wasi-libc's isatty(), as on Linux.
    let null = std::fs::File::open("/dev/null").unwrap();
    assert_eq!(stdin_type(null.into()), Some(12), "/dev/null");
    // A redirected file is a regular file the guest may seek.
    let file = std::fs::File::open(&file).unwrap();
    assert_eq!(stdin_type(file.into()), Some(14), "a regular file");
    // A pipe is a stream of no WASI type.
    assert_eq!(stdin_type(std::process::Stdio::piped()), Some(0), "a pipe");
    // A terminal is a character device without seek rights.
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/ptmx")
        .unwrap();
    assert_eq!(stdin_type(tty.into()), Some(2), "a terminal");
}

/// Seeks its stdin to byte 2 and exits with the byte read there, or the errno.
const SEEK_STDIN: &str = r#"
(module
  (import "wasi_snapshot_preview1" "fd_seek" (func $seek (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $e i32)
    (local.set $e (call $seek (i32.const 0) (i64.const 2) (i32.const 0) (i32.const 16)))
    (if (local.get $e) (then (call $proc_exit (local.get $e))))
    (i32.store (i32.const 0) (i32.const 32))
    (i32.store (i32.const 4) (i32.const 1))
    (local.set $e (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 24)))
    (if (local.get $e) (then (call $proc_exit (local.get $e))))
    (call $proc_exit (i32.load8_u (i32.const 32)))))
"#;

#[test]
fn a_redirected_stdin_file_seeks_as_on_linux() {
    let tmp = tempfile::tempdir().unwrap();
    let guest = write_guest(tmp.path(), SEEK_STDIN);
    let input = tmp.path().join("input");
    std::fs::write(&input, b"abcdef").unwrap();
    let input = std::fs::File::open(&input).unwrap();
    assert_eq!(
        status_with_stdin(&guest, input.into()),
        Some(i32::from(b'c'))
    );
    // A pipe is a stream, without the seek right.
    let pipe = std::process::Stdio::piped();
    assert_eq!(status_with_stdin(&guest, pipe), Some(76));
}
