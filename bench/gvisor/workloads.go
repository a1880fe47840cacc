package main

// The table workloads of `fdtable bench` (issue 5), on gVisor's FDTable.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"gvisor.dev/gvisor/pkg/sentry/kernel"
	"gvisor.dev/gvisor/pkg/sentry/vfs"
)

// fragSeed fixes the holes of the fragmented find-next-fd table.
const fragSeed = 42

// stdioFDs is how many fds (0, 1, 2) every table starts with, as a
// will-it-scale task inherits them.
const stdioFDs = 3

// config is one measurement: a workload at a thread count and fd count.
type config struct {
	workload string
	variant  string // "" or "fragmented" (find-next-fd only)
	threads  int
	fds      int
}

func (c config) String() string {
	s := fmt.Sprintf("%s threads=%d fds=%d", c.workload, c.threads, c.fds)
	if c.variant != "" {
		s += " " + c.variant
	}
	return s
}

// workloadNames lists the workloads in run order.
var workloadNames = []string{"lookup-light", "lookup-shared", "dup1", "find-next-fd", "open1"}

// configs returns the measurements of one workload.
func configs(workload string) []config {
	switch workload {
	case "lookup-light":
		return []config{{workload: workload, threads: 1, fds: 1}}
	case "lookup-shared":
		return []config{
			{workload: workload, threads: 1, fds: 1},
			{workload: workload, threads: 2, fds: 1},
			{workload: workload, threads: 2, fds: 2},
		}
	case "dup1":
		return []config{
			{workload: workload, threads: 1, fds: 1},
			{workload: workload, threads: 2, fds: 2},
		}
	case "find-next-fd":
		return []config{
			{workload: workload, threads: 1, fds: 3},
			{workload: workload, threads: 1, fds: 64},
			{workload: workload, threads: 1, fds: 1000},
			{workload: workload, threads: 1, fds: 100000},
			{workload: workload, threads: 1, fds: 1000, variant: "fragmented"},
		}
	case "open1":
		return []config{
			{workload: workload, threads: 1, fds: 0},
			{workload: workload, threads: 2, fds: 0},
		}
	}
	return nil
}

// instance is a set-up table and the per-thread loop to time on it.
type instance struct {
	op       func(tid, n int)
	teardown func()
}

// fixture owns a table and the files created for it.
type fixture struct {
	e     *env
	t     *kernel.FDTable
	files []*vfs.FileDescription
}

func newFixture(e *env) *fixture {
	return &fixture{e: e, t: e.newTable()}
}

// file creates a file owned by the fixture.
func (f *fixture) file() (*vfs.FileDescription, error) {
	file, err := f.e.newFile()
	if err == nil {
		f.files = append(f.files, file)
	}
	return file, err
}

// fill installs one file at fds [from, to).
func (f *fixture) fill(from, to int, file *vfs.FileDescription) error {
	for fd := from; fd < to; fd++ {
		if err := f.e.installAt(f.t, int32(fd), file); err != nil {
			return fmt.Errorf("install fd %d: %w", fd, err)
		}
	}
	return nil
}

// release drops the table (and with it every installed fd) and the files.
func (f *fixture) release() {
	f.t.DecRef(f.e.ctx)
	for _, file := range f.files {
		file.DecRef(f.e.ctx)
	}
}

// lowestFree is the lowest fd not open in the table, found by probing Exists
// (independent of the table's bitmap).
func lowestFree(t *kernel.FDTable) int32 {
	fd := int32(0)
	for t.Exists(fd) {
		fd++
	}
	return fd
}

// setup builds the table for c and returns the loop to time.
func setup(e *env, c config) (*instance, error) {
	f := newFixture(e)
	inst, err := setupOn(f, c)
	if err != nil {
		f.release()
		return nil, err
	}
	inst.teardown = f.release
	return inst, nil
}

func setupOn(f *fixture, c config) (*instance, error) {
	e, t := f.e, f.t
	stdio, err := f.file()
	if err != nil {
		return nil, err
	}

	switch c.workload {
	case "lookup-light", "lookup-shared":
		// fds[i] is thread i's fd; with fds=1 every thread uses fd 0. Each
		// fd gets its own file, so different fds mean different refcounts.
		fds := make([]int32, c.threads)
		for i := range c.fds {
			file, err := f.file()
			if err != nil {
				return nil, err
			}
			if err := f.fill(i, i+1, file); err != nil {
				return nil, err
			}
		}
		for tid := range fds {
			fds[tid] = int32(tid % c.fds)
		}
		return &instance{op: func(tid, n int) {
			fd := fds[tid]
			for range n {
				e.lookupPut(t, fd)
			}
		}}, nil

	case "dup1":
		// will-it-scale dup1: stdio at 0..2, then one file per thread; each
		// thread dups its own fd and closes the copy, so its file never
		// reaches the last reference.
		if err := f.fill(0, stdioFDs, stdio); err != nil {
			return nil, err
		}
		for tid := range c.threads {
			file, err := f.file()
			if err != nil {
				return nil, err
			}
			if err := f.fill(stdioFDs+tid, stdioFDs+tid+1, file); err != nil {
				return nil, err
			}
		}
		if err := checkDup(e, t, stdioFDs); err != nil {
			return nil, err
		}
		return &instance{op: func(tid, n int) {
			src := int32(stdioFDs + tid)
			for range n {
				nfd := e.dup(t, src)
				e.closeFD(t, nfd)
			}
		}}, nil

	case "find-next-fd":
		// c.fds fds open (0..fds-1, all one file); the fragmented variant then
		// closes 10 % of 3..fds-1 chosen with a fixed seed. dup(0) must land on
		// the lowest free fd; close puts the table back as it was.
		if err := f.fill(0, c.fds, stdio); err != nil {
			return nil, err
		}
		if c.variant == "fragmented" {
			r := rand.New(rand.NewPCG(fragSeed, fragSeed))
			perm := r.Perm(c.fds - stdioFDs)
			for _, i := range perm[:c.fds/10] {
				e.closeFD(t, int32(stdioFDs+i))
			}
		}
		if err := checkDup(e, t, 0); err != nil {
			return nil, err
		}
		return &instance{op: func(tid, n int) {
			for range n {
				nfd := e.dup(t, 0)
				e.closeFD(t, nfd)
			}
		}}, nil

	case "open1":
		if err := f.fill(0, stdioFDs, stdio); err != nil {
			return nil, err
		}
		if fd := e.openClose(t); fd != stdioFDs {
			return nil, fmt.Errorf("open1: got fd %d, want %d", fd, stdioFDs)
		}
		return &instance{op: func(tid, n int) {
			for range n {
				e.openClose(t)
			}
		}}, nil
	}
	return nil, fmt.Errorf("unknown workload %q", c.workload)
}

// checkDup does one dup+close of src and checks that the dup took the lowest
// free fd.
func checkDup(e *env, t *kernel.FDTable, src int32) error {
	want := lowestFree(t)
	got := e.dup(t, src)
	if got < 0 {
		return fmt.Errorf("dup(%d) failed", src)
	}
	if !e.closeFD(t, got) {
		return fmt.Errorf("close(%d) failed", got)
	}
	if got != want {
		return fmt.Errorf("dup(%d) = %d, want lowest free fd %d", src, got, want)
	}
	return nil
}

// parseWorkloads turns -workload values (repeatable, comma lists) into run
// order; empty means all.
func parseWorkloads(vals []string) ([]string, error) {
	if len(vals) == 0 {
		return workloadNames, nil
	}
	want := map[string]bool{}
	for _, v := range vals {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(workloadNames, name) {
				return nil, fmt.Errorf("unknown workload %q (have %v)", name, workloadNames)
			}
			want[name] = true
		}
	}
	var out []string
	for _, name := range workloadNames {
		if want[name] {
			out = append(out, name)
		}
	}
	return out, nil
}
