//! The library executor: runs a [`Program`] through [`fdtable::Files`], one handle per
//! process and the soft limit kept per process, as the kernel does.

use crate::interp::{self, NOT_RUN, Sys, TAG_ROOT_EXIT};
use crate::outcome::{Outcome, Snapshot};
use crate::program::{Frame, HARD_NOFILE, ID_FIFO_R, ID_FIFO_W, Program, STD_IDS};
use fdtable::{Errno, FileLike, FileRef, Files, O_CLOEXEC};
use std::cell::RefCell;
use std::rc::Rc;

/// The open file description the library side installs: just an identity, the same number
/// the kernel side gives the matching eventfd.
#[derive(Debug)]
pub struct Obj {
    /// The file's identity (see [`crate::program::file_id`]).
    pub id: u64,
}

impl FileLike for Obj {}

fn file(id: u64) -> FileRef<Obj> {
    FileRef::new(Obj { id })
}

fn ret(r: Result<u32, Errno>) -> i64 {
    match r {
        Ok(v) => v as i64,
        Err(e) => -(e.raw() as i64),
    }
}

fn ret0(r: Result<(), Errno>) -> i64 {
    ret(r.map(|()| 0))
}

fn flags(cloexec: bool) -> u32 {
    if cloexec { O_CLOEXEC } else { 0 }
}

/// One process of the library run.
struct LibSys {
    files: Files<Obj>,
    out: Rc<RefCell<Outcome>>,
    /// The reservation in progress: the reserving process's handle and the fd.
    resv: Option<(Files<Obj>, u32)>,
}

/// Runs `prog` through the library and returns everything it observed.
pub fn run(prog: &Program) -> Outcome {
    let files = Files::new();
    for (fd, id) in STD_IDS.iter().enumerate() {
        let got = files.install(file(*id), 0, HARD_NOFILE);
        assert_eq!(got, Ok(fd as u32), "a fresh table hands out 0, 1, 2");
    }
    let out = Rc::new(RefCell::new(Outcome::new(prog.recs.len())));
    {
        let mut sys = LibSys {
            files,
            out: out.clone(),
            resv: None,
        };
        let mut frame = Frame::root(prog.nofile);
        interp::run_process(
            &mut sys,
            &prog.recs[..],
            &mut frame,
            0,
            prog.recs.len(),
            TAG_ROOT_EXIT,
        );
    }
    let mut out = Rc::try_unwrap(out)
        .expect("every process handle is gone")
        .into_inner();
    out.exit_status = 0;
    out
}

impl Sys for LibSys {
    fn hi(&self) -> u64 {
        self.out.borrow().hi
    }
    fn set_hi(&mut self, hi: u64) {
        self.out.borrow_mut().hi = hi;
    }
    fn put_result(&mut self, i: usize, r: [i64; 2], args: [u64; 2]) {
        let mut o = self.out.borrow_mut();
        o.results[i] = r;
        o.args[i] = args;
    }
    fn put_result1(&mut self, i: usize, r: i64, args: [u64; 2]) {
        let mut o = self.out.borrow_mut();
        o.results[i][0] = r;
        o.args[i] = args;
    }
    fn put_result2(&mut self, i: usize, r: i64) {
        self.out.borrow_mut().results[i][1] = r;
    }
    fn put_window(&mut self, i: usize, w: [u64; 4]) {
        self.out.borrow_mut().windows[i] = w;
    }
    fn snapshot(&mut self, pos: usize, tag: u64) {
        let fds = self
            .files
            .iter()
            .map(|o| (o.fd, o.cloexec, o.file.id))
            .collect();
        self.out
            .borrow_mut()
            .snapshots
            .push(Snapshot { pos, tag, fds });
    }

    fn open(&mut self, id: u64, cloexec: bool, nofile: u64) -> i64 {
        ret(self.files.install(file(id), flags(cloexec), nofile))
    }
    fn close(&mut self, fd: u32) -> i64 {
        ret0(self.files.close_fd(fd))
    }
    fn dup(&mut self, fd: u32, nofile: u64) -> i64 {
        ret(self.files.dup(fd, nofile))
    }
    fn dup2(&mut self, old: u32, new: u32, nofile: u64) -> i64 {
        ret(self.files.dup2(old, new, nofile))
    }
    fn dup3(&mut self, old: u32, new: u32, flags: u32, nofile: u64) -> i64 {
        ret(self.files.dup3(old, new, flags, nofile))
    }
    fn dupfd(&mut self, fd: u32, from: u32, cloexec: bool, nofile: u64) -> i64 {
        ret(self.files.dupfd(fd, from, cloexec, nofile))
    }
    fn getfd(&mut self, fd: u32) -> i64 {
        ret(self.files.get_close_on_exec(fd).map(u32::from))
    }
    fn setfd(&mut self, fd: u32, arg: u32) -> i64 {
        ret0(
            self.files
                .set_close_on_exec(fd, arg & fdtable::FD_CLOEXEC != 0),
        )
    }
    fn query(&mut self, fd: u32, other: u32) -> i64 {
        ret(self.files.dupfd_query(fd, other).map(u32::from))
    }
    fn close_range(&mut self, first: u32, last: u32, flags: u32) -> i64 {
        ret0(self.files.close_range(first, last, flags))
    }
    fn replace_fd(&mut self, src: u32, fd: u32, cloexec: bool, nofile: u64) -> i64 {
        let Some(file) = self.files.fget(src) else {
            return Errno::EBADF.neg() as i64;
        };
        let flags = if cloexec { fdtable::O_CLOEXEC } else { 0 };
        ret(self.files.replace_fd(fd, file, flags, nofile))
    }
    fn renumber(&mut self, from: u32, to: u32, nofile: u64) -> i64 {
        ret(self.files.renumber(from, to, nofile))
    }
    fn set_nofile(&mut self, _soft: u64) -> i64 {
        // The limit lives in the interpreter's frame and is passed to every call.
        0
    }
    fn fd_size(&mut self) -> i64 {
        self.files.max_fds() as i64
    }
    fn spawn(&mut self, share: bool, body: &mut dyn FnMut(&mut Self)) -> i64 {
        let files = if share {
            self.files.share()
        } else {
            match self.files.fork() {
                Ok(f) => f,
                Err(e) => return -(e.raw() as i64),
            }
        };
        let mut child = LibSys {
            files,
            out: self.out.clone(),
            resv: None,
        };
        body(&mut child);
        0
    }
    fn unshare(&mut self) -> i64 {
        ret0(self.files.unshare())
    }
    fn exec(&mut self, _frame: &Frame, _at: usize, _end: usize, _tag: u64) -> i64 {
        if let Err(e) = self.files.exec() {
            return -(e.raw() as i64);
        }
        // What the kernel side's dynamic loader does before the probe runs: open a file at
        // the lowest free fd (below the raised limit) and close it again. Invisible, except
        // that it grows a table that has no free slot.
        if let Ok(fd) = self.files.alloc_fd(0, HARD_NOFILE, O_CLOEXEC) {
            self.files.put_unused_fd(fd);
        }
        0
    }
    fn reserve_begin(&mut self, _rec: usize, cloexec: bool, nofile: u64) -> i64 {
        let opener = self.files.share();
        match opener.alloc_fd(0, nofile, flags(cloexec)) {
            Ok(fd) => {
                self.resv = Some((opener, fd));
                0
            }
            Err(e) => -(e.raw() as i64),
        }
    }
    fn reserve_end(&mut self, _rec: usize, cloexec: bool, nofile: u64) -> [i64; 2] {
        let w = ret(self.files.install(file(ID_FIFO_W), flags(cloexec), nofile));
        if w < 0 {
            return [w, NOT_RUN];
        }
        let Some((opener, fd)) = self.resv.take() else {
            return [w, NOT_RUN];
        };
        let r = match opener.fd_install(fd, file(ID_FIFO_R)) {
            Ok(()) => fd as i64,
            Err(e) => -(e.raw() as i64),
        };
        [w, r]
    }
    fn reserve_abort(&mut self, _rec: usize) -> i64 {
        if let Some((opener, fd)) = self.resv.take() {
            opener.put_unused_fd(fd);
        }
        0
    }
}
