package libops

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/internal/calltime"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// This file is the GEMM runtime's boundary (symmtune_gemm_open, _enqueue,
// _close): a caller whose symmetric memory is its own (symmtune.torch's,
// torch symm_mem) opens a runner of kernels/gemm/gpu once per (kernel,
// problem, dtype, config, group, device) and enqueues each call on its
// stream, with plain integers: the launch sequence is the plugins' own.
// The request is checked here, tag-free; running needs the cuda build
// (gemmrun_cuda.go; without it, open says the library has no CUDA).

// GemmOpenRequest is symmtune_gemm_open's request.
type GemmOpenRequest struct {
	Kernel string                     `json:"kernel"`
	M      int                        `json:"m"`
	N      int                        `json:"n"`
	K      int                        `json:"k"`
	World  int                        `json:"world"`
	Rank   int                        `json:"rank"`
	Dtype  string                     `json:"dtype"`
	Device int                        `json:"device"`
	Config map[string]json.RawMessage `json:"config"`
	// WarmFrom, optional: an open handle of the same op on the last
	// generation of the workspace, whose row counts open here at once.
	WarmFrom uint64 `json:"warm_from"`
}

// gemmOpen is a checked request.
type gemmOpen struct {
	kernel       gpu.Variant
	prob         gpu.Problem
	dtype        string
	cfg          gpu.Config
	rank, device int
	regions      []uint64
	table        uint64
	warmFrom     uint64
}

// gemmPtrs are one call's operands (gpu.Ptrs as integers); the scales are
// zero for bf16 and f16.
type gemmPtrs struct{ a, b, c, extra, scaleA, scaleB uint64 }

// checkGemmOpen decodes and checks a request and the region pointers.
func checkGemmOpen(req []byte, regions []uint64, table uint64) (gemmOpen, error) {
	var r GemmOpenRequest
	if err := decodeRequest(req, &r); err != nil {
		return gemmOpen{}, err
	}
	if r.Dtype == "" {
		return gemmOpen{}, bad("dtype: missing (bf16, f16, e4m3 or e4m3_row)")
	}
	p, err := problemReq{Kernel: r.Kernel, M: r.M, N: r.N, K: r.K, World: r.World, Dtype: r.Dtype}.problem()
	if err != nil {
		return gemmOpen{}, err
	}
	if r.Config == nil {
		return gemmOpen{}, bad("config: missing")
	}
	v, err := variant(r.Kernel)
	if err != nil {
		return gemmOpen{}, err
	}
	cfg, err := parseConfig(v, r.Config)
	if err != nil {
		return gemmOpen{}, err
	}
	if err := v.Validate(cfg, p); err != nil {
		return gemmOpen{}, badErr(err)
	}
	switch {
	case r.Rank < 0 || r.Rank >= r.World:
		return gemmOpen{}, bad("rank %d: want 0..%d", r.Rank, r.World-1)
	case r.Device < 0:
		return gemmOpen{}, bad("device %d: want a CUDA device ordinal", r.Device)
	case len(regions) != r.World:
		return gemmOpen{}, bad("region_ptrs: %d regions for world %d", len(regions), r.World)
	case table == 0:
		return gemmOpen{}, bad("ptr_table: NULL")
	}
	for q, d := range regions {
		if d == 0 {
			return gemmOpen{}, bad("region_ptrs[%d]: NULL", q)
		}
	}
	return gemmOpen{kernel: v, prob: p, dtype: r.Dtype, cfg: cfg, rank: r.Rank, device: r.Device,
		regions: append([]uint64(nil), regions...), table: table, warmFrom: r.WarmFrom}, nil
}

// GemmOpen checks the request and opens its op in the current CUDA
// context (which must be the request's device's): the handle. The op runs
// any row count up to the request's m (the region was sized for m): each
// row count's runner opens at its first call (gemmCall).
func GemmOpen(req []byte, regions []uint64, table uint64) (handle uint64, warning string, err error) {
	defer func() { err = flat(err) }()
	o, err := checkGemmOpen(req, regions, table)
	if err != nil {
		return 0, "", err
	}
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	if err := checkPoisoned(); err != nil {
		return 0, "", err
	}
	if err := unitBoundsFromEnv(); err != nil {
		return 0, "", err
	}
	var d gemmOpDevice
	if err := dev.relaxed(func() (err error) {
		d, err = dev.openGemm(o)
		return err
	}); err != nil {
		return 0, "", err
	}
	op := &gemmOp{o: o, dev: d, units: map[int]*gemmUnit{}, warn: map[int]string{}, evicted: map[int]bool{}}
	if o.warmFrom != 0 {
		if err := warmFrom(op, o.warmFrom); err != nil {
			var errs []error
			for _, u := range op.units {
				lru.remove(u)
				errs = append(errs, u.close())
			}
			return 0, "", errors.Join(append([]error{err}, append(errs, dev.relaxed(d.close))...)...)
		}
	}
	return addHandle(&liveRunner{gemm: op, dtype: o.dtype, scaled: o.prob.Dtype.FP8()}), "", nil
}

// GemmEnqueue enqueues one call of handle's op at m rows on stream (a
// CUstream handle; 0 the legacy default stream) with operands a, b, c and
// extra (see gpu.Ptrs), on the calling thread: a warning when m's runner
// opened with another config than the op's. An FP8 op's calls need their
// scales (GemmEnqueueScaled): it is refused here.
func GemmEnqueue(handle, stream uint64, m int, a, b, c, extra uint64) (string, error) {
	return gemmEnqueue(handle, stream, m, gemmPtrs{a: a, b: b, c: c, extra: extra}, false)
}

// GemmEnqueueScaled is GemmEnqueue for an e4m3 or e4m3_row op, with the
// device addresses of A's and B's fp32 scales (docs/fp8.md: one float
// each for e4m3; for e4m3_row [M/W] floats of this rank's rows of A for
// agmm, [M] for matmulrs, and [N] of B). A bf16 or f16 op is refused.
func GemmEnqueueScaled(handle, stream uint64, m int, a, b, c, extra, scaleA, scaleB uint64) (string, error) {
	return gemmEnqueue(handle, stream, m, gemmPtrs{a: a, b: b, c: c, extra: extra, scaleA: scaleA, scaleB: scaleB}, true)
}

func gemmEnqueue(handle, stream uint64, m int, p gemmPtrs, scaled bool) (warning string, err error) {
	defer func() { err = flat(err) }()
	calltime.Begin()
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	calltime.Mark("lock")
	if err := checkPoisoned(); err != nil {
		return "", err
	}
	lr, err := liveHandle(handle)
	if err != nil {
		return "", err
	}
	if lr.gemm == nil {
		return "", bad("handle %d: an all-reduce runner, not a GEMM one", handle)
	}
	op := lr.gemm
	switch {
	case lr.scaled && !scaled:
		return "", bad("handle %d: dtype %s scales its operands: call symmtune_gemm_enqueue_scaled with scale_a and scale_b", handle, lr.dtype)
	case !lr.scaled && scaled:
		return "", bad("handle %d: dtype %s takes no scales: call symmtune_gemm_enqueue (scales are for e4m3 and e4m3_row)", handle, lr.dtype)
	case p.a == 0 || p.b == 0 || p.c == 0:
		return "", bad("operands: a %#x, b %#x, c %#x; none may be NULL", p.a, p.b, p.c)
	case scaled && (p.scaleA == 0 || p.scaleB == 0):
		return "", bad("scales: scale_a %#x, scale_b %#x; neither may be NULL", p.scaleA, p.scaleB)
	case m < 1 || m > op.o.prob.M || m%op.o.prob.World != 0:
		return "", bad("m=%d: want 1..%d rows, divisible by the %d ranks (the handle was opened for m=%d)", m, op.o.prob.M, op.o.prob.World, op.o.prob.M)
	}
	if lr.retired {
		return "", errRetired(handle)
	}
	calltime.Mark("checks")
	return gemmCall(handle, op, m, stream, p)
}

// enqueueErr is a runner's enqueue error as the caller sees it: prefixed,
// but a poisoned workspace's whole as it is (one line, naming the op and
// the ranks; cudamem.PoisonError).
func enqueueErr(err error) error {
	var p *cudamem.PoisonedError
	if errors.As(err, &p) {
		return err
	}
	return fmt.Errorf("enqueue: %w", err)
}

// errRetired is a retired runner's answer to a call.
func errRetired(handle uint64) error {
	return bad("handle %d: retired (kept open only for the CUDA graphs that captured it); call the runner that replaced it", handle)
}

// flat makes err's message one line, keeping its kind (bad input or not)
// and what it wraps.
func flat(err error) error {
	if err == nil {
		return nil
	}
	var b *BadInputError
	if errors.As(err, &b) {
		return &BadInputError{Msg: oneLine(b.Msg)}
	}
	if msg := oneLine(err.Error()); msg != err.Error() {
		return &flatError{msg, err}
	}
	return err
}

// flatError is an error with a one-line message that still unwraps.
type flatError struct {
	msg string
	err error
}

func (e *flatError) Error() string { return e.msg }
func (e *flatError) Unwrap() error { return e.err }

// GemmClose retires handle: it takes no more calls, and what it opened on
// the device closes now or once the CUDA graphs holding it are destroyed.
func GemmClose(handle uint64) error {
	_, err := Retire([]uint64{handle})
	return err
}
