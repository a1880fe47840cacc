package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
)

// TestWorkloadsJSON runs every workload for a few iterations and checks the
// shape of each JSON line.
func TestWorkloadsJSON(t *testing.T) {
	const samples = 3
	var out bytes.Buffer
	o := opts{samples: samples, iters: 20}
	if err := runAll(&out, io.Discard, workloadNames, o); err != nil {
		t.Fatal(err)
	}

	want := map[string]int{}
	for _, w := range workloadNames {
		want[w] = len(configs(w))
	}
	got := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Bytes()
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("not a JSON object: %s: %v", line, err)
		}
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		base := []string{"fds", "impl", "ns_per_op", "ops_per_sec", "samples", "threads", "workload"}
		withVariant := []string{"fds", "impl", "ns_per_op", "ops_per_sec", "samples", "threads", "variant", "workload"}
		if !slices.Equal(keys, base) && !slices.Equal(keys, withVariant) {
			t.Errorf("keys %v, want %v (variant optional): %s", keys, base, line)
		}

		var r result
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if r.Impl != "gvisor" {
			t.Errorf("impl %q: %s", r.Impl, line)
		}
		if r.Threads < 1 || r.Fds < 0 {
			t.Errorf("threads/fds: %s", line)
		}
		if r.NsPerOp <= 0 || r.OpsPerSec <= 0 {
			t.Errorf("non-positive timing: %s", line)
		}
		if len(r.Samples) != samples {
			t.Errorf("%d samples, want %d: %s", len(r.Samples), samples, line)
		}
		if r.Variant != "" && (r.Workload != "find-next-fd" || r.Variant != "fragmented") {
			t.Errorf("unexpected variant: %s", line)
		}
		got[r.Workload]++
	}
	if !maps(got, want) {
		t.Errorf("rows per workload %v, want %v", got, want)
	}
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDupLowestFree checks that gVisor's dup (FDTable.NewFD from 0) returns
// the lowest free fd: into holes in order, past the end, and past the
// table's initial 64K-bit bitmap.
func TestDupLowestFree(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(e)
	defer f.release()
	file, err := f.file()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.fill(0, 10, file); err != nil {
		t.Fatal(err)
	}
	for _, fd := range []int32{7, 3, 5} {
		if !e.closeFD(f.t, fd) {
			t.Fatalf("close(%d) failed", fd)
		}
	}
	for _, want := range []int32{3, 5, 7, 10, 11} {
		if got := e.dup(f.t, 0); got != want {
			t.Fatalf("dup(0) = %d, want %d", got, want)
		}
	}
	// dup+close keeps landing on the same lowest hole.
	e.closeFD(f.t, 5)
	for range 3 {
		if err := checkDup(e, f.t, 0); err != nil {
			t.Fatal(err)
		}
	}

	const big = 70000 // past bitmap.New(MaxUint16) in FDTable.init
	if err := f.fill(12, big, file); err != nil {
		t.Fatal(err)
	}
	e.closeFD(f.t, 5) // no-op: already closed
	if got := e.dup(f.t, 0); got != 5 {
		t.Fatalf("dup(0) = %d, want 5", got)
	}
	if got := e.dup(f.t, 0); got != big {
		t.Fatalf("dup(0) = %d, want %d", got, big)
	}
}

// TestFragmentedSetup checks the fragmented find-next-fd table: 10 % of the
// fds closed, and the benchmark's dup lands on the lowest hole.
func TestFragmentedSetup(t *testing.T) {
	e, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := config{workload: "find-next-fd", variant: "fragmented", threads: 1, fds: 1000}
	f := newFixture(e)
	defer f.release()
	inst, err := setupOn(f, c) // checks dup against lowestFree itself
	if err != nil {
		t.Fatal(err)
	}
	closed, lowest := 0, int32(-1)
	for fd := range int32(c.fds) {
		if !f.t.Exists(fd) {
			closed++
			if lowest < 0 {
				lowest = fd
			}
		}
	}
	if closed != c.fds/10 || lowest < stdioFDs {
		t.Fatalf("%d fds closed (lowest %d), want %d at or above %d", closed, lowest, c.fds/10, stdioFDs)
	}
	inst.op(0, 10)
	if got := e.dup(f.t, 0); got != lowest {
		t.Fatalf("dup(0) = %d, want %d", got, lowest)
	}
}

func TestParseWorkloads(t *testing.T) {
	got, err := parseWorkloads([]string{"open1, dup1", "lookup-light"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lookup-light", "dup1", "open1"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseWorkloads([]string{"dd"}); err == nil {
		t.Error("unknown workload accepted")
	}
	if got, _ := parseWorkloads(nil); !slices.Equal(got, workloadNames) {
		t.Errorf("default %v, want all", got)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
}
