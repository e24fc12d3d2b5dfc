//go:build cuda

package cudamem

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/cublaslt"
)

// A fixed load for TimingLoaded: a bf16 (else f16) product of loadN x loadN x loadN
// on random operands, enqueued on the trial's stream before its warm-up
// (for LoadWarmFromEnv's time) and once before each timed call. A trial then runs
// at the clock a GPU busy with other work holds at its power cap, the same
// for every config, instead of at the boost clock an idle GPU gives a
// short burst: on 1 x H200 that difference alone flipped matmulrs's
// 128x256 tile against the 128x128 ping-pong one (3.3% one way at 1,965
// MHz, 3.5% the other at the cap; bench/order_probe.py,
// bench/results/2026-12-02-h200-search-order-w1.md).
const loadN = 4096

// load is the process's load operands and plan, made at the first loaded
// trial in the current context and kept for the process (a cache keyed by
// nothing else: a plugin process serves one device); about 128 MiB.
type load struct {
	ctx        cu.CUContext
	h          *cublaslt.Handle
	plan       *cublaslt.Plan
	a, b, d    cu.DevicePtr
	ws         cu.DevicePtr
	perProduct time.Duration // measured once, at the cap or near it
}

var (
	loadMu  sync.Mutex
	theLoad *load
)

// loadFor returns the current context's load, making it once.
func loadFor() (*load, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	ctx, err := cu.CurrentContext()
	if err != nil {
		return nil, fmt.Errorf("trial load: %w", err)
	}
	if theLoad != nil {
		if theLoad.ctx == ctx {
			return theLoad, nil
		}
		return nil, errors.New("trial load: made in another CUDA context")
	}
	l := &load{ctx: ctx}
	if err := l.open(); err != nil {
		return nil, errors.Join(fmt.Errorf("trial load: %w", err), l.close())
	}
	theLoad = l
	return l, nil
}

func (l *load) open() error {
	var err error
	if l.h, err = cublaslt.NewHandle(); err != nil {
		return err
	}
	const ws = 32 << 20
	// bf16 where the GPU has it (sm_80 and later), else f16: the
	// finalists are timed loaded by default, so a GPU without bf16
	// products must still get a load. Both are 2-byte elements.
	var errs []error
	for _, dt := range []cublaslt.DType{cublaslt.BF16, cublaslt.F16} {
		if l.plan, err = l.h.Plan(cublaslt.Matmul{M: loadN, N: loadN, K: loadN, DType: dt, BT: true, Workspace: ws}); err == nil {
			break
		}
		errs = append(errs, fmt.Errorf("%s product: %w", dt, err))
	}
	if l.plan == nil {
		return errors.Join(errs...)
	}
	elems := loadN * loadN
	host := make([]uint16, elems)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range host {
		// splitmix64's step; the top bits as a bf16 in [-1, 1) (random
		// bits toggle the multipliers as real data does; zeros would not).
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		host[i] = uint16(0x3F00 | (z>>48)&0x80FF) // random sign, exponent 126 or 127, mantissa: ±[0.5, 2)
	}
	for _, p := range []*cu.DevicePtr{&l.a, &l.b, &l.d} {
		if *p, err = cu.MemAlloc(int64(2 * elems)); err != nil {
			return err
		}
	}
	if l.ws, err = cu.MemAlloc(ws); err != nil {
		return err
	}
	for _, p := range []cu.DevicePtr{l.a, l.b} {
		if err := cu.MemcpyHtoD(p, unsafe.Pointer(&host[0]), int64(2*elems)); err != nil {
			return err
		}
	}
	return nil
}

// run enqueues n products on stream.
func (l *load) run(stream cu.Stream, n int) error {
	for range n {
		if err := l.plan.Run(stream, 0, l.a, l.b, l.d, l.ws); err != nil {
			return fmt.Errorf("trial load: %w", err)
		}
	}
	return nil
}

// warm enqueues the load on stream for about d; the first time it also
// measures one product's time there (after one untimed product: the
// first also loads cuBLASLt's kernel).
func (l *load) warm(stream cu.Stream, d time.Duration) error {
	if l.perProduct == 0 {
		if err := l.run(stream, 1); err != nil {
			return err
		}
		if err := stream.Synchronize(); err != nil {
			return fmt.Errorf("trial load: %w", err)
		}
		start := time.Now()
		if err := l.run(stream, 20); err != nil {
			return err
		}
		if err := stream.Synchronize(); err != nil {
			return fmt.Errorf("trial load: %w", err)
		}
		l.perProduct = max(time.Since(start)/20, 50*time.Microsecond)
	}
	if err := l.run(stream, int(d/l.perProduct)); err != nil {
		return err
	}
	return nil
}

func (l *load) close() error {
	var errs []error
	for _, p := range []cu.DevicePtr{l.a, l.b, l.d, l.ws} {
		if p != 0 {
			errs = append(errs, cu.MemFree(p))
		}
	}
	if l.plan != nil {
		errs = append(errs, l.plan.Close())
	}
	if l.h != nil {
		errs = append(errs, l.h.Close())
	}
	return errors.Join(errs...)
}
