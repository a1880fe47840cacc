//! `bpf(2)` commands (argument 0): which return a new descriptor, and which run a program
//! that may change the caller's table. Every BPF object's
//! descriptor is close-on-exec (kernel/bpf/syscall.c: `bpf_map_new_fd`, `bpf_prog_new_fd`,
//! `bpf_link_new_fd`, `bpf_iter_new_fd`, the BTF, token and statistics descriptors).

/// The commands that return a new descriptor: (value, name).
pub const CREATING: &[(u64, &str)] = &[
    (0, "BPF_MAP_CREATE"),
    (5, "BPF_PROG_LOAD"),
    (7, "BPF_OBJ_GET"),
    (13, "BPF_PROG_GET_FD_BY_ID"),
    (14, "BPF_MAP_GET_FD_BY_ID"),
    (17, "BPF_RAW_TRACEPOINT_OPEN"),
    (18, "BPF_BTF_LOAD"),
    (19, "BPF_BTF_GET_FD_BY_ID"),
    (28, "BPF_LINK_CREATE"),
    (30, "BPF_LINK_GET_FD_BY_ID"),
    (32, "BPF_ENABLE_STATS"),
    (33, "BPF_ITER_CREATE"),
    (36, "BPF_TOKEN_CREATE"),
];

/// Whether command `cmd` (by value) returns a new descriptor.
pub fn creates(cmd: u64) -> bool {
    CREATING.iter().any(|&(v, _)| v == cmd)
}

/// Whether command `name` (strace's spelling) returns a new descriptor.
pub fn creates_named(name: &str) -> bool {
    CREATING.iter().any(|&(_, n)| n == name)
}

/// The commands that run a program synchronously in the caller: `BPF_PROG_TEST_RUN` (also
/// spelled `BPF_PROG_RUN`). A `BPF_PROG_TYPE_SYSCALL` program (libbpf's light skeleton
/// loaders) creates descriptors with `bpf_sys_bpf` (at the lowest free numbers,
/// close-on-exec) and closes any with `bpf_sys_close`; which, only the program knows.
pub const RUNNING: &[(u64, &str)] = &[(10, "BPF_PROG_TEST_RUN")];

/// Whether command `cmd` (by value) runs a program that may change the caller's table.
pub fn runs_program(cmd: u64) -> bool {
    RUNNING.iter().any(|&(v, _)| v == cmd)
}
