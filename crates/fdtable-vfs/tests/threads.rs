//! Tasks on several threads: shared positions stay consistent (`f_pos_lock` when the file is
//! shared), blocking pipes and sockets hand data across threads that share one table, and a
//! close on one thread does not pull a file out from under a blocked reader on another.

use fdtable::{Errno, FileRef};
use fdtable_vfs::uapi::*;
use fdtable_vfs::workloads::{read_full, write_all};
use fdtable_vfs::{MemFs, Task};

const N: usize = 5000;

#[test]
fn shared_table_writes_never_reuse_a_position() {
    let mut t = Task::new(MemFs::new());
    let fd = t.open(b"/tmp/f", (O_CREAT | O_RDWR) as i32, 0o644).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let sib = t.clone_thread();
            std::thread::spawn(move || {
                for _ in 0..N {
                    assert_eq!(sib.write(fd, &[b'a' + i as u8]), Ok(1));
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    // Every write got its own offset: nothing was overwritten.
    assert_eq!(t.lseek(fd, 0, SEEK_CUR), Ok((2 * N) as i64));
    assert_eq!(t.fstat(fd).unwrap().size, (2 * N) as i64);
    let mut all = vec![0u8; 2 * N];
    assert_eq!(t.pread64(fd, &mut all, 0), Ok(2 * N));
    assert_eq!(all.iter().filter(|&&b| b == b'a').count(), N);
    assert_eq!(all.iter().filter(|&&b| b == b'b').count(), N);
}

#[test]
fn forked_tasks_share_one_position() {
    let t = Task::new(MemFs::new());
    let fd = t.open(b"/tmp/f", (O_CREAT | O_RDWR) as i32, 0o644).unwrap();
    let child = t.fork().unwrap();
    let th = std::thread::spawn(move || {
        for _ in 0..N {
            child.write(fd, b"c").unwrap();
        }
    });
    for _ in 0..N {
        t.write(fd, b"p").unwrap();
    }
    th.join().unwrap();
    assert_eq!(t.lseek(fd, 0, SEEK_CUR), Ok((2 * N) as i64));
    assert_eq!(t.fstat(fd).unwrap().size, (2 * N) as i64);
}

#[test]
fn blocking_pipe_between_threads_of_one_table() {
    let mut t = Task::new(MemFs::new());
    let [r, w] = t.pipe2(0).unwrap();
    let writer = t.clone_thread();
    let th = std::thread::spawn(move || {
        let data: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        write_all(&writer, w, &data).unwrap();
        let mut writer = writer;
        writer.close(w).unwrap();
    });
    let mut got = Vec::new();
    let mut buf = [0u8; 7777];
    loop {
        match t.read(r, &mut buf).unwrap() {
            0 => break,
            n => got.extend_from_slice(&buf[..n]),
        }
    }
    th.join().unwrap();
    assert_eq!(got.len(), 300_000);
    assert!(got.iter().enumerate().all(|(i, &b)| b == i as u8));
}

#[test]
fn close_by_a_sibling_does_not_free_a_blocked_readers_file() {
    let mut t = Task::new(MemFs::new());
    let [a, b] = t.socketpair(AF_UNIX, SOCK_STREAM, 0).unwrap();
    let reader = t.clone_thread();
    let th = std::thread::spawn(move || {
        let mut buf = [0u8; 5];
        read_full(&reader, a, &mut buf).map(|n| (n, buf))
    });
    // Wait until the reader holds its own reference (table + this probe + the reader's).
    let probe = t.files().fget(a as u32).unwrap();
    while FileRef::count(&probe) < 3 {
        std::thread::yield_now();
    }
    drop(probe);
    // Closing the fd drops only the table's reference: the socket stays open for the read.
    assert_eq!(t.close(a), Ok(()));
    assert_eq!(t.write(b, b"hello"), Ok(5));
    assert_eq!(th.join().unwrap(), Ok((5, *b"hello")));
    // Once the reader is done, the socket is released: the peer sees no reader.
    assert_eq!(t.write(b, b"x"), Err(Errno::EPIPE));
}

#[test]
fn eventfd_wakes_a_sibling() {
    let mut t = Task::new(MemFs::new());
    let e = t.eventfd2(0, 0).unwrap();
    let sib = t.clone_thread();
    let th = std::thread::spawn(move || {
        let mut b = [0u8; 8];
        sib.read(e, &mut b).map(|_| u64::from_ne_bytes(b))
    });
    assert_eq!(t.write(e, &7u64.to_ne_bytes()), Ok(8));
    assert_eq!(th.join().unwrap(), Ok(7));
}

/// The release of a file runs at its last put, before the `close` that dropped it returns —
/// on a shared table too, where the file's memory waits for an RCU grace period: a pipe's
/// reader sees end-of-file as soon as the last writer's close returns (and a blocked reader on
/// another thread wakes up to it), however many lock-free lookups of the writer came before.
#[test]
fn the_last_writers_close_gives_eof_at_once() {
    for round in 0..200 {
        let mut t = Task::new(MemFs::new());
        let [r, w] = t.pipe2(O_NONBLOCK).unwrap();
        let mut sib = t.clone_thread();
        // The sibling looks the write end up (lock-free, counted) and writes, then finishes;
        // the table stays shared.
        std::thread::spawn({
            let s = t.clone_thread();
            move || {
                for _ in 0..50 {
                    assert_eq!(s.write(w, b"x"), Ok(1));
                }
            }
        })
        .join()
        .unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(read_full(&t, r, &mut buf[..50]), Ok(50));
        assert_eq!(t.read(r, &mut buf), Err(Errno::EAGAIN), "round {round}");
        if round % 2 == 0 {
            sib.close(w).unwrap();
        } else {
            t.close(w).unwrap();
        }
        // No other reference: the close was the last put, the release ran in it.
        assert_eq!(
            t.read(r, &mut buf),
            Ok(0),
            "round {round}: EOF right after close"
        );
        drop(sib);
    }
    // A reader blocked on another thread sees EOF when the last writer closes.
    let mut t = Task::new(MemFs::new());
    let [r, w] = t.pipe2(0).unwrap();
    let reader = t.clone_thread();
    let th = std::thread::spawn(move || {
        let mut buf = [0u8; 8];
        reader.read(r, &mut buf)
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    t.close(w).unwrap();
    assert_eq!(th.join().unwrap(), Ok(0));
}
