package main

// The gVisor side: a bare sentry environment outside any sandbox, enough to
// drive the real kernel.FDTable with real vfs.FileDescriptions.
//
// What a running sentry provides and this harness replaces:
//   - the Task as context.Context: here a background context carrying the two
//     values the table and file paths ask for (the RLIMIT_NOFILE limit set and
//     credentials);
//   - Kernel: a zero Kernel with MaxFDLimit stored, which is all
//     Kernel.NewFDTable and FDTable.NewFDs read from it;
//   - the kernel's VFS: a standalone vfs.VirtualFilesystem; Init builds the
//     anonymous mount that eventfds live on.
//
// gVisor's own pkg/sentry/kernel/fd_table_test.go builds its fixture the same
// way (contexttest + a limit set + a bare table); contexttest is test-only and
// not in the Go-proxy module, so the context is assembled here from
// pkg/context, pkg/sentry/limits and pkg/sentry/kernel/auth.

import (
	"fmt"

	"gvisor.dev/gvisor/pkg/abi/linux"
	"gvisor.dev/gvisor/pkg/context"
	"gvisor.dev/gvisor/pkg/sentry/fsimpl/eventfd"
	"gvisor.dev/gvisor/pkg/sentry/kernel"
	"gvisor.dev/gvisor/pkg/sentry/kernel/auth"
	"gvisor.dev/gvisor/pkg/sentry/limits"
	"gvisor.dev/gvisor/pkg/sentry/vfs"
)

// nofileLimit is RLIMIT_NOFILE for the harness: above the largest table the
// workloads build (100,000 fds plus a few).
const nofileLimit = 1 << 20

// env is one bare sentry: a context, a kernel and a VFS.
type env struct {
	ctx context.Context
	k   *kernel.Kernel
	vfs *vfs.VirtualFilesystem
}

func newEnv() (*env, error) {
	ls := limits.NewLimitSet()
	ls.SetUnchecked(limits.NumberOfFiles, limits.Limit{Cur: nofileLimit, Max: nofileLimit})
	creds := auth.NewRootCredentials(auth.NewRootUserNamespace())
	ctx := context.WithValue(context.Background(), limits.CtxLimits, ls)
	ctx = context.WithValue(ctx, auth.CtxCredentials, creds)

	k := &kernel.Kernel{}
	// What kernel.Init does with a zero InitKernelArgs.MaxFDLimit.
	k.MaxFDLimit.Store(kernel.MaxFdLimit)

	v := &vfs.VirtualFilesystem{}
	if err := v.Init(ctx); err != nil {
		return nil, fmt.Errorf("vfs init: %w", err)
	}
	return &env{ctx: ctx, k: k, vfs: v}, nil
}

// newTable returns an empty FDTable as Kernel.NewFDTable makes it for a new
// process.
func (e *env) newTable() *kernel.FDTable {
	return e.k.NewFDTable()
}

// newFile returns a fresh eventfd file description holding one reference,
// as eventfd2(0, 0) creates it before installing it.
func (e *env) newFile() (*vfs.FileDescription, error) {
	return eventfd.New(e.ctx, e.vfs, 0, false, linux.O_RDWR)
}

// installAt puts file at fd (the table takes its own reference).
func (e *env) installAt(t *kernel.FDTable, fd int32, file *vfs.FileDescription) error {
	old, err := t.NewFDAt(e.ctx, fd, file, kernel.FDFlags{})
	if old != nil {
		old.DecRef(e.ctx)
	}
	return err
}

// closeFD is close(2) as the sentry does it (syscalls/linux/sys_file.go
// Close): remove from the table, OnClose, drop the table's reference.
func (e *env) closeFD(t *kernel.FDTable, fd int32) bool {
	f := t.Remove(e.ctx, fd)
	if f == nil {
		return false
	}
	_ = f.OnClose(e.ctx)
	f.DecRef(e.ctx)
	return true
}

// lookupPut is the lookup path of every fd syscall: Task.GetFile (FDTable.Get,
// lock-free, TryIncRef) and the deferred DecRef.
func (e *env) lookupPut(t *kernel.FDTable, fd int32) {
	f, _ := t.Get(fd)
	f.DecRef(e.ctx)
}

// dup is dup(2) as sys_file.go Dup does it: GetFile, NewFD from 0 (lowest
// free fd, under the table mutex), drop the lookup reference. It returns the
// new fd or -1.
func (e *env) dup(t *kernel.FDTable, fd int32) int32 {
	f, _ := t.Get(fd)
	if f == nil {
		return -1
	}
	nfd, err := t.NewFD(e.ctx, 0, f, kernel.FDFlags{})
	f.DecRef(e.ctx)
	if err != nil {
		return -1
	}
	return nfd
}

// openClose is the table part of open1 with an eventfd standing in for the
// opened file: a fresh FileDescription, NewFD, drop the creation reference
// (eventfd2 in sys_eventfd.go), then close, which drops the last reference and
// releases the file. It returns the fd it got or -1.
func (e *env) openClose(t *kernel.FDTable) int32 {
	f, err := e.newFile()
	if err != nil {
		return -1
	}
	nfd, err := t.NewFD(e.ctx, 0, f, kernel.FDFlags{})
	f.DecRef(e.ctx)
	if err != nil {
		return -1
	}
	e.closeFD(t, nfd)
	return nfd
}
