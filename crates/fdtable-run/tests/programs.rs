//! The corpus's programs, run natively and under `fdtable run`: same exit status, stdout
//! and stderr, and every process's real table equal to the library's when it exits
//! (`--check-tables`), with no host descriptor leaked by the supervisor.
//!
//! A test whose tool is missing says so and passes, except under CI (`CI` or `FDTABLE_CI=1`,
//! as `.ci/run` sets), where it fails: `ci/setup` installs every tool (support::have).

mod support;

use std::path::Path;
use support::{have, programs, same};

fn copy(name: &str, dir: &Path) {
    std::fs::copy(programs().join(name), dir.join(name)).unwrap();
}

#[test]
fn bash_redirections_process_substitution_coprocs() {
    if !have("bash") {
        return;
    }
    let r = same("bash", &["bash", "script.sh"], &[], |d| {
        copy("script.sh", d)
    });
    assert!(
        r.stdout.contains("procsub\n") && r.stdout.contains("got pong"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("done\n"));
}

#[test]
fn coreutils_pipelines() {
    if !have("bash") || !have("gzip") {
        return;
    }
    let r = same("coreutils", &["bash", "coreutils.sh"], &[], |d| {
        copy("coreutils.sh", d)
    });
    assert!(r.stdout.contains("dd ok"), "{}", r.stdout);
}

#[test]
fn make_and_gcc() {
    if !have("make") || !have("gcc") {
        return;
    }
    let setup = |d: &Path| {
        std::fs::copy(programs().join("Makefile.test"), d.join("Makefile")).unwrap();
        std::fs::write(
            d.join("a.c"),
            "#include <stdio.h>\nint b(void); int c(void);\nint main(void) { printf(\"%d\\n\", b() + c()); return 0; }\n",
        )
        .unwrap();
        std::fs::write(d.join("b.c"), "int b(void) { return 40; }\n").unwrap();
        std::fs::write(d.join("c.c"), "int c(void) { return 2; }\n").unwrap();
    };
    let r = same("make", &["make", "-j2", "--no-print-directory"], &[], setup);
    assert!(r.stdout.ends_with("42\n"), "{}", r.stdout);
}

#[test]
fn git() {
    if !have("git") {
        return;
    }
    let r = same("git", &["sh", "git.sh"], &[], |d| copy("git.sh", d));
    assert!(r.stdout.contains("fsck ok"), "{}", r.stdout);
}

#[test]
fn python_subprocess() {
    if !have("python3") {
        return;
    }
    let r = same(
        "py-subprocess",
        &["python3", "py_subprocess.py"],
        &[],
        |d| copy("py_subprocess.py", d),
    );
    assert!(r.stdout.contains("passfd"), "{}", r.stdout);
}

#[test]
fn python_threads() {
    if !have("python3") {
        return;
    }
    let r = same("py-threads", &["python3", "py_threads.py"], &[], |d| {
        copy("py_threads.py", d)
    });
    assert!(r.stdout.starts_with("800\nTrue\n"), "{}", r.stdout);
}

#[test]
fn python_asyncio() {
    if !have("python3") {
        return;
    }
    let r = same("py-asyncio", &["python3", "py_asyncio.py"], &[], |d| {
        copy("py_asyncio.py", d)
    });
    assert!(r.stdout.contains("from child 4"), "{}", r.stdout);
}

#[test]
fn python_multiprocessing() {
    if !have("python3") {
        return;
    }
    let r = same("py-mp", &["python3", "py_multiprocessing.py"], &[], |d| {
        copy("py_multiprocessing.py", d)
    });
    assert!(
        r.stdout.contains("forkserver [0, 1, 4, 9, 16, 25] True"),
        "{}",
        r.stdout
    );
}

#[test]
fn perl() {
    if !have("perl") {
        return;
    }
    let r = same("perl", &["perl", "perl_io.pl"], &[], |d| {
        copy("perl_io.pl", d);
        std::fs::write(d.join("in.txt"), "b\nc\na\n").unwrap();
    });
    assert!(r.stdout.contains("through pipe"), "{}", r.stdout);
}

#[test]
fn go() {
    if !have("go") {
        return;
    }
    let build = support::build_dir().join("go");
    support::fresh(&build);
    std::fs::copy(programs().join("go_workers.go"), build.join("main.go")).unwrap();
    std::fs::write(build.join("go.mod"), "module workers\n\ngo 1.21\n").unwrap();
    let st = std::process::Command::new("go")
        .args(["build", "-o", "workers", "."])
        .current_dir(&build)
        .env("GOFLAGS", "-mod=mod")
        .status()
        .expect("go build");
    assert!(st.success(), "go build failed");
    let exe = build.join("workers");
    let r = same("go", &[exe.to_str().unwrap()], &[], |_| {});
    assert!(r.stdout.contains("dialed 10 true"), "{}", r.stdout);
}

#[test]
fn node() {
    if !have("node") {
        return;
    }
    let r = same("node", &["node", "node_io.js"], &[], |d| {
        copy("node_io.js", d)
    });
    assert!(r.stdout.contains("net xxxxx"), "{}", r.stdout);
}

#[test]
fn java() {
    if !have("java") {
        return;
    }
    // ~20 JVM threads sharing one table.
    let r = same("java", &["java", "-version"], &[], |_| {});
    assert!(r.stderr.contains("version"), "{}", r.stderr);
}

#[test]
fn rust_std_threads_and_processes() {
    if !have("rustc") {
        return;
    }
    // The corpus's Rust program: threads opening files, Command with pipes (posix_spawn), a
    // failing spawn, UnixStream::pair, a loopback TcpListener, try_clone.
    let build = support::build_dir();
    let exe = build.join("rust_threads");
    let st = std::process::Command::new("rustc")
        .args(["-O", "-o"])
        .arg(&exe)
        .arg(programs().join("rust_threads.rs"))
        .status()
        .expect("rustc");
    assert!(st.success(), "rustc failed");
    let r = same("rust", &[exe.to_str().unwrap()], &[], |_| {});
    assert!(r.stdout.contains("piped"), "{}", r.stdout);
}
