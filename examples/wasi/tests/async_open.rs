//! `path_open_async`: an async host call holding the core's `Send` reservation across an
//! `.await`. Driven by a hand-written executor (a thread-parking `block_on`) and single polls;
//! the "slow open" is a gate the test opens. No timing: every wait is for an event the test
//! itself causes.

use fdtable::FdState;
use fdtable_example_wasi::{DirNode, Filetype, PathOpen, WasiCtx, WasiErrno};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// A future that stays pending until [`Gate::open`] is called: the slow part of an open.
#[derive(Clone, Default)]
struct Gate(Arc<GateInner>);

#[derive(Default)]
struct GateInner {
    open: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Gate {
    fn open(&self) {
        // ORDERING: Release; pairs with the Acquire in `poll`: whoever sees the gate open sees
        // everything done before opening it.
        self.0.open.store(true, Ordering::Release);
        if let Some(w) = self.0.waker.lock().unwrap().take() {
            w.wake();
        }
    }

    fn wait(&self) -> GateFuture {
        GateFuture(self.clone())
    }
}

struct GateFuture(Gate);

impl Future for GateFuture {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let inner = &(self.0).0;
        // Register first, then check: an `open` between the two still wakes us.
        *inner.waker.lock().unwrap() = Some(cx.waker().clone());
        // ORDERING: Acquire; pairs with the Release store in `Gate::open`.
        if inner.open.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The executor: polls `f` to completion on this thread, parking while it is pending.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// One poll with a waker that does nothing.
fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn assert_send_static<T: Send + 'static>(_: &T) {}

fn ctx() -> WasiCtx {
    let sandbox = DirNode::new();
    sandbox.add_file("data.txt", b"payload");
    WasiCtx::builder()
        .preopen("/sandbox", sandbox)
        .build()
        .unwrap()
}

#[test]
fn the_reservation_is_held_across_the_await_then_installed() {
    let mut c = ctx();
    let gate = Gate::default();
    let mut fut = Box::pin(c.path_open_async(3, PathOpen::read("data.txt"), gate.wait()));
    assert_send_static(&fut);
    assert!(poll_once(fut.as_mut()).is_pending());
    // Pending: fd 4 is reserved — invisible to the guest, skipped by other opens, not a
    // renumber target, not closable.
    assert_eq!(c.table().fd_state(4), FdState::Reserved);
    assert_eq!(c.fd_fdstat_get(4), Err(WasiErrno::Badf));
    assert_eq!(c.fd_close(4), Err(WasiErrno::Badf));
    assert_eq!(c.fd_renumber(0, 4), Err(WasiErrno::Badf));
    assert_eq!(c.path_open(3, &PathOpen::read("data.txt")), Ok(5));
    assert!(c.preopens().iter().all(|(fd, _)| *fd != 4));
    // The slow open completes: installed at the reserved fd, with its rights.
    gate.open();
    assert_eq!(poll_once(fut.as_mut()), Poll::Ready(Ok(4)));
    let st = c.fd_fdstat_get(4).unwrap();
    assert_eq!(st.fs_filetype, Filetype::RegularFile);
    let mut buf = [0u8; 7];
    assert_eq!(c.fd_read(4, &mut buf), Ok(7));
    assert_eq!(&buf, b"payload");
    assert!(!c.table().is_shared(), "the reservation's handle is gone");
}

#[test]
fn a_cancelled_call_gives_its_fd_back() {
    let mut c = ctx();
    let gate = Gate::default();
    let mut fut = Box::pin(c.path_open_async(3, PathOpen::read("data.txt"), gate.wait()));
    assert!(poll_once(fut.as_mut()).is_pending());
    assert_eq!(c.table().fd_state(4), FdState::Reserved);
    // The guest's call is cancelled: the future is dropped while pending.
    drop(fut);
    assert_eq!(c.table().fd_state(4), FdState::Free);
    assert!(c.table().next_reserved_fd(0).is_none());
    assert_eq!(c.path_open(3, &PathOpen::read("data.txt")), Ok(4));
    // Never polled at all: the same.
    let fut = c.path_open_async(3, PathOpen::read("data.txt"), gate.wait());
    assert_eq!(c.table().fd_state(5), FdState::Reserved);
    drop(fut);
    assert_eq!(c.table().fd_state(5), FdState::Free);
}

#[test]
fn completes_on_another_thread() {
    let mut c = ctx();
    let gate = Gate::default();
    let fut = c.path_open_async(3, PathOpen::create("new.txt"), gate.wait());
    // The future moves to another thread, which runs it to completion with the executor.
    let runner = std::thread::spawn(move || block_on(fut));
    // Opened from here; the runner wakes (or had not parked yet) and installs on its thread.
    gate.open();
    assert_eq!(runner.join().unwrap(), Ok(4));
    assert_eq!(c.fd_write(4, b"written"), Ok(7));
}

#[test]
fn an_open_failing_after_the_await_gives_the_fd_back() {
    let mut c = ctx();
    let gate = Gate::default();
    gate.open();
    let fut = c.path_open_async(3, PathOpen::read("missing.txt"), gate.wait());
    assert_eq!(c.table().fd_state(4), FdState::Reserved);
    assert_eq!(block_on(fut), Err(WasiErrno::Noent));
    assert_eq!(c.table().fd_state(4), FdState::Free);
    assert!(c.table().next_reserved_fd(0).is_none());
}

#[test]
fn bad_arguments_fail_before_reserving_anything() {
    let mut c = ctx();
    let gate = Gate::default();
    let cases = [
        (u32::MAX, PathOpen::read("data.txt"), WasiErrno::Badf),
        (9, PathOpen::read("data.txt"), WasiErrno::Badf),
        (1, PathOpen::read("data.txt"), WasiErrno::Notdir),
        (
            3,
            PathOpen {
                rights_base: fdtable_example_wasi::Rights::SOCK_ACCEPT,
                ..PathOpen::read("data.txt")
            },
            WasiErrno::Notcapable,
        ),
    ];
    for (dirfd, req, want) in cases {
        let fut = c.path_open_async(dirfd, req, gate.wait());
        assert!(c.table().next_reserved_fd(0).is_none());
        // Ready at the first poll, without waiting for the gate.
        let mut fut = Box::pin(fut);
        assert_eq!(poll_once(fut.as_mut()), Poll::Ready(Err(want)));
    }
}

#[test]
fn emfile_when_nothing_is_free() {
    let mut c = WasiCtx::builder()
        .preopen("/s", DirNode::new())
        .nofile(5)
        .build()
        .unwrap();
    let gate = Gate::default();
    let first = c.path_open_async(3, PathOpen::create("a"), gate.wait());
    let second = c.path_open_async(3, PathOpen::create("b"), gate.wait());
    assert_eq!(block_on(second), Err(WasiErrno::Mfile));
    gate.open();
    assert_eq!(block_on(first), Ok(4));
}
