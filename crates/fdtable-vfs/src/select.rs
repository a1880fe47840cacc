//! `poll` without waiting (fs/select.c `do_pollfd` with a zero timeout): the readiness each
//! file reports now. Blocking across several files needs wait queues, which this layer does
//! not have; blocking reads and writes on one file do wait.

use crate::task::Task;
use crate::uapi::{POLLERR, POLLHUP, POLLNVAL};
use fdtable::{Errno, FdPayload};

/// `struct pollfd`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PollFd {
    /// The descriptor; negative entries are skipped (`revents` 0).
    pub fd: i32,
    /// The events asked for.
    pub events: u16,
    /// The events ready (`POLLERR` and `POLLHUP` are always reported, `POLLNVAL` for a bad fd).
    pub revents: u16,
}

impl<P: FdPayload> Task<P> {
    /// `poll(fds, nfds, 0)` — fills each `revents` and returns how many are non-zero.
    /// `EINVAL` if there are more entries than `RLIMIT_NOFILE`. An fd that is not open (or is
    /// `O_PATH`) gets `POLLNVAL`.
    ///
    /// # References
    ///
    /// [poll(2)](https://man7.org/linux/man-pages/man2/poll.2.html)
    pub fn poll(&self, fds: &mut [PollFd]) -> Result<usize, Errno> {
        if fds.len() as u64 > self.nofile() {
            return Err(Errno::EINVAL);
        }
        let mut ready = 0;
        for p in fds.iter_mut() {
            p.revents = if p.fd < 0 {
                0
            } else {
                match self.fdget(p.fd) {
                    Err(_) => POLLNVAL,
                    Ok(f) => f.ops().poll(&f) & (p.events | POLLERR | POLLHUP),
                }
            };
            if p.revents != 0 {
                ready += 1;
            }
        }
        Ok(ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemFs;
    use crate::uapi::*;

    #[test]
    fn pipe_readiness() {
        let mut t = Task::new(MemFs::new());
        let [r, w] = t.pipe2(0).unwrap();
        let mut fds = [
            PollFd {
                fd: r,
                events: POLLIN,
                revents: 0,
            },
            PollFd {
                fd: w,
                events: POLLOUT,
                revents: 0,
            },
            PollFd {
                fd: 77,
                events: POLLIN,
                revents: 0,
            },
            PollFd {
                fd: -1,
                events: POLLIN,
                revents: 9,
            },
        ];
        assert_eq!(t.poll(&mut fds), Ok(2));
        assert_eq!(fds.map(|p| p.revents), [0, POLLOUT, POLLNVAL, 0]);
        t.write(w, b"x").unwrap();
        t.close(w).unwrap();
        assert_eq!(t.poll(&mut fds[..1]), Ok(1));
        assert_eq!(fds[0].revents, POLLIN | POLLHUP);
        let f = t.open(b"/tmp/x", (O_CREAT | O_RDWR) as i32, 0o600).unwrap();
        let mut one = [PollFd {
            fd: f,
            events: POLLIN | POLLOUT,
            revents: 0,
        }];
        assert_eq!(t.poll(&mut one), Ok(1));
        assert_eq!(one[0].revents, POLLIN | POLLOUT);
    }
}
