package main

// Manual timing, no testing.Benchmark: a pool of goroutines locked to OS
// threads, started together through a spinning barrier for every sample.
// A sample is `iters` operations on every thread; its time is the wall time
// from the first thread leaving the barrier to the last thread finishing, so
// ns per op per thread = wall / iters.

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// pinThreads pins worker tid to CPU tid mod NumCPU, one per core as
// will-it-scale does with hwloc.
var pinThreads = true

// pin binds the calling OS thread to one CPU; failure is ignored (the
// measurement is still valid, only noisier).
func pin(tid int) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() == 0 {
		return
	}
	k := tid % set.Count()
	for cpu := 0; cpu < 1024; cpu++ {
		if set.IsSet(cpu) {
			if k == 0 {
				var one unix.CPUSet
				one.Set(cpu)
				_ = unix.SchedSetaffinity(0, &one)
				return
			}
			k--
		}
	}
}

// opts controls how long each measurement runs.
type opts struct {
	samples  int           // samples per measurement
	duration time.Duration // measured time per measurement, split over the samples
	warmup   time.Duration // warm-up (and calibration) time per measurement
	iters    int           // if > 0: fixed iterations per sample, no calibration
}

// stamp is a per-thread timestamp on its own cache line.
type stamp struct {
	t0, t1 int64
	_      [48]byte
}

// pool runs op(tid, n) on `threads` locked goroutines at once.
type pool struct {
	threads int
	op      func(tid, n int)
	cmds    []chan int
	done    sync.WaitGroup
	arrived atomic.Int32
	stamps  []stamp
	base    time.Time
}

func newPool(threads int, op func(tid, n int)) *pool {
	p := &pool{
		threads: threads,
		op:      op,
		cmds:    make([]chan int, threads),
		stamps:  make([]stamp, threads),
		base:    time.Now(),
	}
	ready := sync.WaitGroup{}
	ready.Add(threads)
	for tid := range threads {
		p.cmds[tid] = make(chan int)
		go p.worker(tid, &ready)
	}
	ready.Wait()
	return p
}

func (p *pool) now() int64 { return int64(time.Since(p.base)) }

func (p *pool) worker(tid int, ready *sync.WaitGroup) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if pinThreads {
		pin(tid)
	}
	ready.Done()
	for n := range p.cmds[tid] {
		// Barrier: spin until every thread has arrived. Yield now and then
		// in case there are fewer CPUs than threads.
		p.arrived.Add(1)
		for spins := 0; p.arrived.Load() < int32(p.threads); spins++ {
			if spins%1024 == 1023 {
				runtime.Gosched()
			}
		}
		p.stamps[tid].t0 = p.now()
		p.op(tid, n)
		p.stamps[tid].t1 = p.now()
		p.done.Done()
	}
}

// run does one sample of n iterations per thread and returns its wall time.
func (p *pool) run(n int) time.Duration {
	p.arrived.Store(0)
	p.done.Add(p.threads)
	for _, c := range p.cmds {
		c <- n
	}
	p.done.Wait()
	t0, t1 := p.stamps[0].t0, p.stamps[0].t1
	for _, s := range p.stamps[1:] {
		t0 = min(t0, s.t0)
		t1 = max(t1, s.t1)
	}
	return time.Duration(max(t1-t0, 1))
}

func (p *pool) close() {
	for _, c := range p.cmds {
		close(c)
	}
}

// measure warms up, calibrates the per-sample iteration count, and returns
// one ns-per-op-per-thread figure per sample.
func measure(threads int, op func(tid, n int), o opts) []float64 {
	p := newPool(threads, op)
	defer p.close()

	iters := o.iters
	if iters > 0 {
		p.run(iters) // warm-up
	} else {
		// Double the iteration count until one run is long enough to time
		// reliably and the warm-up time is spent.
		n, spent := 16, time.Duration(0)
		var last time.Duration
		for {
			last = p.run(n)
			spent += last
			if spent >= o.warmup && last >= time.Millisecond {
				break
			}
			if last < max(o.warmup/4, 2*time.Millisecond) {
				n *= 2
			}
		}
		perOp := float64(last) / float64(n)
		target := float64(o.duration) / float64(o.samples)
		iters = max(int(target/perOp), 1)
	}

	runtime.GC() // start every measurement with a clean heap
	out := make([]float64, 0, o.samples)
	for range o.samples {
		out = append(out, float64(p.run(iters))/float64(iters))
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
