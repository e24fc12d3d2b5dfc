//go:build cuda && gpu

package cublaslt

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
)

// Built by scripts/gpu-bundle.sh as bin/cublaslt.test; run on a GPU machine
// with -test.v to see which combinations cuBLASLt refused.

const (
	fp8Tol  = 2e-2 // relative RMS error, docs/fp8.md "Verification"
	bf16Tol = 1e-2
	wsBytes = 32 << 20
)

// gpu is what every GPU test needs: a current context, a handle, a
// stream and a workspace.
type gpu struct {
	h       *Handle
	s       cu.Stream
	ws      cu.DevicePtr
	version int
	sm      int // compute capability, e.g. 90
	ctx     cu.CUContext
}

// bind makes g's context current on the calling goroutine's thread: a
// subtest runs on a goroutine of its own, where no context is current.
func (g *gpu) bind(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		t.Fatal(err)
	}
}

// gpuSetup makes device 0's primary context current on a locked thread
// (as cuda/cu's GPU test does) and opens cuBLASLt.
func gpuSetup(t *testing.T) *gpu {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if _, err := cu.Library(); err != nil {
		t.Fatalf("driver: %v", err)
	}
	if n, err := cu.NumDevices(); err != nil || n < 1 {
		t.Fatalf("NumDevices = %d, %v", n, err)
	}
	ctx, err := cu.Device(0).RetainPrimaryCtx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cu.Device(0).ReleasePrimaryCtx() })
	if err := cu.SetCurrentContext(ctx); err != nil {
		t.Fatal(err)
	}
	name, _ := cu.Device(0).Name()
	cc, err := cu.Device(0).Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor)
	if err != nil {
		t.Fatal(err)
	}
	g := &gpu{sm: cc[0]*10 + cc[1], ctx: ctx}
	if g.h, err = NewHandle(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.h.Close() })
	lib, _ := Load()
	g.version, _ = Version()
	t.Logf("%s (sm_%d), %s version %d", name, g.sm, lib, g.version)
	if g.s, err = cu.MakeStream(cu.NonBlocking); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.s.Destroy() })
	g.ws = alloc(t, wsBytes)
	return g
}

func alloc(t *testing.T, bytes int64) cu.DevicePtr {
	t.Helper()
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cu.MemFree(p) })
	return p
}

// upload copies the elements of v (a slice of bytes, uint16s or float32s)
// to a new device buffer.
func upload[T byte | uint16 | float32](t *testing.T, v []T) cu.DevicePtr {
	t.Helper()
	n := int64(len(v)) * int64(unsafe.Sizeof(v[0]))
	p := alloc(t, n)
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&v[0]), n); err != nil {
		t.Fatal(err)
	}
	return p
}

func download(t *testing.T, p cu.DevicePtr, n int) []uint16 {
	t.Helper()
	out := make([]uint16, n)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, int64(2*n)); err != nil {
		t.Fatal(err)
	}
	return out
}

// fp8Problem makes m's operands and scales on the host and uploads them.
func fp8Problem(t *testing.T, m Matmul, seed uint64) (p *problem, a, b, sa, sb cu.DevicePtr) {
	t.Helper()
	p, qa, qb, err := hostFP8(m, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p, upload(t, qa), upload(t, qb), upload(t, p.scaleA), upload(t, p.scaleB)
}

// errSkipAlgo from check's run: the algorithm has nothing to check.
var errSkipAlgo = errors.New("nothing to check")

// check runs every ranked algorithm of plan with run and compares D
// (poisoned with NaN before each run) with p's reference.
func (g *gpu) check(t *testing.T, plan *Plan, p *problem, d cu.DevicePtr, tol float64, run func(algo int) error) {
	t.Helper()
	_, _, nd := extent(p.m)
	for algo := 0; algo < plan.Algos(); algo++ {
		if err := cu.MemsetD8(d, 0xff, int64(2*nd)); err != nil { // bf16 0xffff: NaN
			t.Fatal(err)
		}
		if err := run(algo); err == errSkipAlgo {
			continue
		} else if err != nil {
			t.Errorf("algo %d (%s): %v", algo, plan.AlgoKey(algo)[:16], err)
			continue
		}
		if err := g.s.Synchronize(); err != nil {
			t.Fatalf("algo %d: synchronize: %v", algo, err)
		}
		e, bad := p.relErr(download(t, d, nd))
		if bad > 0 || !(e <= tol) {
			t.Errorf("algo %d (%s): relative RMS error %.3g (tolerance %g), %d NaN/Inf", algo, plan.AlgoKey(algo)[:16], e, tol, bad)
		} else {
			t.Logf("algo %d: relative RMS error %.3g", algo, e)
		}
	}
}

// fp8Case runs m with every ranked algorithm. A refusal by cuBLASLt fails
// the test when required, else it is logged.
func (g *gpu) fp8Case(t *testing.T, m Matmul, required bool) {
	t.Helper()
	p, a, b, sa, sb := fp8Problem(t, m, uint64(m.M*7+m.N*5+m.K*3+m.Batch))
	plan, err := g.h.Plan(p.m)
	if err != nil {
		if required {
			t.Fatalf("REFUSED (required): %v", err)
		}
		t.Logf("REFUSED: %v", err)
		return
	}
	defer plan.Close()
	t.Logf("%s: %d algorithms", p.m, plan.Algos())
	_, _, nd := extent(p.m)
	d := alloc(t, int64(2*nd))
	g.check(t, plan, p, d, fp8Tol, func(algo int) error {
		return plan.RunScaled(g.s, algo, a, b, d, g.ws, sa, sb)
	})
}

func TestGPUFP8(t *testing.T) {
	g := gpuSetup(t)
	if g.sm < 89 {
		t.Skipf("FP8 products need sm_89 or newer, this is sm_%d", g.sm)
	}
	// Row scales: cuBLASLt 12.9 added them, for sm_90 and newer.
	rows := g.version >= rowScalesVersion && g.sm >= 90
	base := Matmul{M: 256, N: 384, K: 512, DType: E4M3, Out: BF16, BT: true, Workspace: wsBytes}
	for _, fast := range []bool{false, true} {
		for _, c := range []struct {
			name     string
			mod      func(*Matmul)
			required bool
		}{
			{"tensor", func(m *Matmul) { m.Scaling = TensorScales }, true},
			{"rows", func(m *Matmul) { m.Scaling = RowScales }, rows},
			{"tensor batched", func(m *Matmul) {
				m.M, m.N, m.K, m.Scaling = 128, 256, 256, TensorScales
				m.Batch, m.StrideA, m.StrideD = 3, 128*256+64, 128*256+32
			}, true},
			{"tensor padded ld", func(m *Matmul) { m.Scaling, m.LDA, m.LDB, m.LDD = TensorScales, 512+64, 512+32, 384+16 }, true},
			{"rows sm target", func(m *Matmul) { m.Scaling, m.SMCountTarget = RowScales, 64 }, rows},
			// cuBLASLt's FP8 kernels take B [K,N] only on sm_100 and newer.
			{"tensor B [K,N]", func(m *Matmul) { m.Scaling, m.BT = TensorScales, false }, false},
			{"rows B [K,N]", func(m *Matmul) { m.Scaling, m.BT = RowScales, false }, false},
		} {
			m := base
			c.mod(&m)
			m.FastAccum = fast
			name := c.name
			if fast {
				name += " fast accum"
			}
			t.Run(name, func(t *testing.T) {
				g.bind(t)
				g.fp8Case(t, m, c.required)
			})
		}
	}
	// Refused before cuBLASLt is asked.
	bad := base
	bad.Scaling, bad.Batch, bad.StrideA, bad.StrideD = RowScales, 2, 256*512, 256*384
	if _, err := g.h.Plan(bad); err == nil {
		t.Error("row scales with Batch 2 were planned")
	} else {
		t.Logf("refused as it should be: %v", err)
	}
}

// bf16Problem is m with fresh random bf16 operands on the device, and D.
func bf16Problem(t *testing.T, m Matmul, seed uint64) (p *problem, a, b, d cu.DevicePtr) {
	t.Helper()
	m, err := m.normalize()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 30))
	na, nb, nd := extent(m)
	p = &problem{m: m, a: make([]float64, na), b: make([]float64, nb)}
	qa, qb := make([]uint16, na), make([]uint16, nb)
	for i := range qa {
		qa[i] = bf16Encode(float32(2*r.Float64() - 1))
		p.a[i] = bf16Decode(qa[i])
	}
	for i := range qb {
		qb[i] = bf16Encode(float32(2*r.Float64() - 1))
		p.b[i] = bf16Decode(qb[i])
	}
	p.reference()
	return p, upload(t, qa), upload(t, qb), alloc(t, int64(2*nd))
}

// TestGPUPlanFrom: row counts planned with the ranking of their bucket's
// top (symmtune.torch's runtime, issue 54), launched with no Check: every
// algorithm computes the right product, the bucket's where it runs the
// row count, else the row count's own (the launch ranks it, once). The top's
// own algorithms all pass Check. The last case borrows a ranking made with
// a workspace for plans that have none: the split-K algorithms the
// heuristic picks there need one, so cuBLASLt refuses them and the plans
// must rank their own.
func TestGPUPlanFrom(t *testing.T) {
	g := gpuSetup(t)
	for _, c := range []struct {
		top      Matmul
		rows     []int
		verify   bool
		noWS     bool // the row counts' plans have no workspace
		mustRank bool // some launch must rank its own
	}{
		{Matmul{M: 512, N: 1536, K: 1024, DType: BF16, BT: true, Workspace: wsBytes}, []int{512, 257, 300, 511}, true, false, false},
		// symmtune.torch's MLP shapes (runtime_check's memory check).
		{Matmul{M: 1024, N: 14336, K: 4096, DType: BF16, BT: true, Workspace: wsBytes}, []int{1024, 513, 777, 1000}, false, false, false},
		{Matmul{M: 1024, N: 4096, K: 14336, DType: BF16, BT: true, Workspace: wsBytes}, []int{1024, 513, 777, 1000}, false, false, false},
		{Matmul{M: 64, N: 256, K: 8192, DType: BF16, BT: true, Workspace: wsBytes}, []int{64, 40}, true, true, true},
	} {
		planFrom(t, g, c.top, c.rows, c.verify, c.noWS, c.mustRank)
	}
}

// planFrom plans each row count of rows with top's ranking and logs which
// of its algorithms Check passes (the top's own must all pass). With
// verify it launches each of them, a fresh plan each, on random operands
// against a float64 reference (small shapes only: the reference runs on
// the CPU), and counts the launches that ranked their own.
func planFrom(t *testing.T, g *gpu, top Matmul, rows []int, verify, noWS, mustRank bool) {
	from, err := g.h.Plan(top)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	ranked := 0
	for _, r := range rows {
		m := top
		m.M = r
		if noWS {
			m.Workspace = 0
		}
		var p *problem
		var a, b, d cu.DevicePtr
		if verify {
			p, a, b, d = bf16Problem(t, m, uint64(r))
			m = p.m
		} else if m, err = m.normalize(); err != nil {
			t.Fatal(err)
		}
		plan, err := g.h.PlanFrom(m, from, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs := 0
		for algo := range plan.Algos() {
			if err := plan.Check(algo); err != nil {
				if r == top.M && !noWS {
					t.Errorf("%s: the top's own algo %d fails Check: %v", m, algo, err)
				}
				t.Logf("%s: algo %d does not run it: %v", m, algo, err)
				continue
			}
			runs++
		}
		t.Logf("%s: %d of %d of the top's algorithms run it", m, runs, plan.Algos())
		plan.Close()
		if !verify {
			continue
		}
		g.check(t, from, p, d, bf16Tol, func(algo int) error {
			plan, err := g.h.PlanFrom(m, from, func() { ranked++ })
			if err != nil {
				return err
			}
			defer plan.Close()
			err = plan.Run(g.s, algo, a, b, d, g.ws)
			if algo >= plan.Algos() && err != nil {
				t.Logf("%s: algo %d: %v", m, algo, err) // its own ranking is shorter
				return errSkipAlgo
			}
			return err
		})
	}
	t.Logf("%s: %d launches ranked their own", top, ranked)
	if mustRank && ranked == 0 {
		t.Errorf("%s: no borrowed algorithm was refused: the case does not reach the fallback", top)
	}
}

func TestGPUBF16(t *testing.T) {
	g := gpuSetup(t)
	p, a, b, d := bf16Problem(t, Matmul{M: 256, N: 384, K: 512, DType: BF16, BT: true, Workspace: wsBytes}, 16)
	m := p.m
	plan, err := g.h.Plan(m)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	t.Logf("%s: %d algorithms", m, plan.Algos())
	g.check(t, plan, p, d, bf16Tol, func(algo int) error { return plan.Run(g.s, algo, a, b, d, g.ws) })
	// RunScaled without scales is Run.
	g.check(t, plan, p, d, bf16Tol, func(algo int) error { return plan.RunScaled(g.s, algo, a, b, d, g.ws, 0, 0) })
}

// TestGPURowScaleOffset runs a row-scaled product on rows 1..256 of a
// 257-row A, as a pipeline's chunk does, so its scale vector starts 4 bytes
// into the buffer: only 4-byte aligned. It runs last because a misaligned
// access would leave the context unusable. A refusal is a finding (the
// pipelines must then align their chunks' scales), not a failure; wrong
// numbers are, and so is an error at synchronize (the kernel could not
// read the unaligned vector).
func TestGPURowScaleOffset(t *testing.T) {
	g := gpuSetup(t)
	if g.version < rowScalesVersion || g.sm < 90 {
		t.Skipf("row scales need cuBLASLt 12.9 and sm_90; this is %d on sm_%d", g.version, g.sm)
	}
	full := Matmul{M: 257, N: 384, K: 512, DType: E4M3, Out: BF16, Scaling: RowScales, BT: true, Workspace: wsBytes}
	p, a, b, sa, sb := fp8Problem(t, full, 257)
	// The product of rows 1..256, and its reference.
	m := full
	m.M = 256
	sub := &problem{m: p.m, a: p.a[m.K:], b: p.b, scaleA: p.scaleA[1:], scaleB: p.scaleB}
	sub.m.M = 256
	sub.reference()
	plan, err := g.h.Plan(m)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	d := alloc(t, int64(2*m.M*m.N))
	g.check(t, plan, sub, d, fp8Tol, func(algo int) error {
		err := plan.RunScaled(g.s, algo, a+cu.DevicePtr(m.K), b, d, g.ws, sa+4, sb)
		if err != nil {
			t.Logf("FINDING: a 4-byte aligned row-scale pointer is refused: %v", err)
			t.SkipNow()
		}
		return nil
	})
}
