//go:build cuda && gpu

package cu

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// pdlPTX (sm_90): slow_set(p, v) lets its dependents launch at once
// (griddepcontrol.launch_dependents), sleeps about 100 us and then stores
// v at p; dep_copy(src, dst) waits for the grid it depends on
// (griddepcontrol.wait) and copies the word at src to dst. Launched as
// slow_set's dependent, dep_copy starts while slow_set sleeps, so only its
// wait makes it read v.
const pdlPTX = `
.version 7.8
.target sm_90
.address_size 64

.visible .entry slow_set(.param .u64 p_ptr, .param .u32 p_val)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<3>;
	griddepcontrol.launch_dependents;
	ld.param.u64 %rd1, [p_ptr];
	ld.param.u32 %r1, [p_val];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, 0;
SLEEP:
	nanosleep.u32 1000;
	add.u32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, 100;
	@%p1 bra SLEEP;
	st.global.u32 [%rd2], %r1;
	ret;
}

.visible .entry dep_copy(.param .u64 p_src, .param .u64 p_dst)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<5>;
	griddepcontrol.wait;
	ld.param.u64 %rd1, [p_src];
	ld.param.u64 %rd2, [p_dst];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	ld.global.u32 %r1, [%rd3];
	st.global.u32 [%rd4], %r1;
	ret;
}
`

// TestGPULaunchDependent: a programmatic dependent sees what the kernel
// before it wrote, launched directly (LaunchDependent for odd values,
// LaunchBlobDependent for even ones) and replayed from a captured graph.
func TestGPULaunchDependent(t *testing.T) {
	gpuSetup(t)
	if major, err := Device(0).Attribute(ComputeCapabilityMajor); err != nil || major < 9 {
		t.Skipf("griddepcontrol needs sm_90 (major %d, %v)", major, err)
	}
	mod, err := LoadData(pdlPTX)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	set, err := mod.Function("slow_set")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := mod.Function("dep_copy")
	if err != nil {
		t.Fatal(err)
	}
	p, err := MemAlloc(8)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(p)
	src, dst := uint64(p), uint64(p)+4
	s, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	// blob: dep_copy's parameters as LaunchBlobDependent takes them (the
	// Hopper GEMM's way: sm90.Function.LaunchDependent).
	blob := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, src), dst)
	enqueue := func(v uint64) {
		t.Helper()
		if err := set.Launch(1, 1, 1, 32, 1, 1, 0, s, []unsafe.Pointer{unsafe.Pointer(&src), unsafe.Pointer(&v)}); err != nil {
			t.Fatal(err)
		}
		var err error
		if v%2 == 0 {
			err = cp.LaunchBlobDependent(1, 32, 0, s, blob, []int{0, 8})
		} else {
			err = cp.LaunchDependent(1, 1, 1, 32, 1, 1, 0, s, []unsafe.Pointer{unsafe.Pointer(&src), unsafe.Pointer(&dst)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for v := uint32(1); v <= 4; v++ {
		enqueue(uint64(v))
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got := readWords(t, p, 2); got[1] != v {
			t.Fatalf("launch %d: the dependent copied %d, want %d", v, got[1], v)
		}
	}
	if err := MemsetD32(p, 0, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginCapture(CaptureRelaxed); err != nil {
		t.Fatal(err)
	}
	enqueue(7)
	g, err := s.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Destroy()
	for i := 0; i < 3; i++ {
		if err := MemsetD32(p, 0, 2); err != nil {
			t.Fatal(err)
		}
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got := readWords(t, p, 2); got[0] != 7 || got[1] != 7 {
			t.Fatalf("replay %d: words %v, want [7 7]", i, got)
		}
	}
}
