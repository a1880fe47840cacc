// Command fdtable-gvisor runs the table workloads of `fdtable bench` on
// gVisor's sentry FDTable (gvisor.dev/gvisor/pkg/sentry/kernel) with real
// eventfd file descriptions, and prints one JSON object per measurement on
// stdout. Progress goes to stderr. See README.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// result is one output line.
type result struct {
	Workload string `json:"workload"`
	Impl     string `json:"impl"`
	Threads  int    `json:"threads"`
	Fds      int    `json:"fds"`
	// Variant is set only on the fragmented find-next-fd row.
	Variant   string    `json:"variant,omitempty"`
	NsPerOp   float64   `json:"ns_per_op"`
	OpsPerSec float64   `json:"ops_per_sec"`
	Samples   []float64 `json:"samples"`
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// runAll runs every configuration of the named workloads and writes one JSON
// line per measurement to out.
func runAll(out, progress io.Writer, workloads []string, o opts) error {
	e, err := newEnv()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	for _, w := range workloads {
		for _, c := range configs(w) {
			inst, err := setup(e, c)
			if err != nil {
				return fmt.Errorf("%v: setup: %w", c, err)
			}
			samples := measure(c.threads, inst.op, o)
			inst.teardown()

			for i := range samples {
				samples[i] = round2(samples[i])
			}
			ns := median(samples)
			r := result{
				Workload:  c.workload,
				Impl:      "gvisor",
				Threads:   c.threads,
				Fds:       c.fds,
				Variant:   c.variant,
				NsPerOp:   round2(ns),
				OpsPerSec: math.Round(float64(c.threads) * 1e9 / ns),
				Samples:   samples,
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
			fmt.Fprintf(progress, "gvisor: %-40s %10.2f ns/op %14.0f ops/s\n", c.String(), r.NsPerOp, r.OpsPerSec)
		}
	}
	return nil
}

func main() {
	var (
		quick     = flag.Bool("quick", false, "short runs: the whole harness in well under 15 s")
		samples   = flag.Int("samples", 0, "samples per measurement (default 10, 5 with -quick)")
		duration  = flag.Duration("duration", 0, "measured time per measurement, split over the samples (default 1s, 300ms with -quick)")
		warmup    = flag.Duration("warmup", 0, "warm-up and calibration time per measurement (default 200ms, 50ms with -quick)")
		iters     = flag.Int("iters", 0, "fixed iterations per sample and thread, skipping calibration (0: calibrate)")
		list      = flag.Bool("list", false, "print the workload names and exit")
		pin       = flag.Bool("pin", true, "pin worker thread i to CPU i mod NumCPU")
		cpuprof   = flag.String("cpuprofile", "", "write a pprof CPU profile of the whole run to this file")
		workloads listFlag
	)
	flag.Var(&workloads, "workload", "workload to run (repeatable or comma list; default all): "+strings.Join(workloadNames, ", "))
	flag.Parse()

	if *list {
		for _, w := range workloadNames {
			fmt.Println(w)
		}
		return
	}
	names, err := parseWorkloads(workloads)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fdtable-gvisor:", err)
		os.Exit(2)
	}

	pinThreads = *pin
	o := opts{samples: 10, duration: time.Second, warmup: 200 * time.Millisecond, iters: *iters}
	if *quick {
		o.samples, o.duration, o.warmup = 5, 300*time.Millisecond, 50*time.Millisecond
	}
	if *samples > 0 {
		o.samples = *samples
	}
	if *duration > 0 {
		o.duration = *duration
	}
	if *warmup > 0 {
		o.warmup = *warmup
	}

	if *cpuprof != "" {
		pf, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fdtable-gvisor:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			fmt.Fprintln(os.Stderr, "fdtable-gvisor:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	fmt.Fprintf(os.Stderr, "gvisor: GOMAXPROCS=%d, %d samples, %v per measurement\n", runtime.GOMAXPROCS(0), o.samples, o.duration)
	if err := runAll(os.Stdout, os.Stderr, names, o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "fdtable-gvisor:", err)
		os.Exit(1)
	}
}
