//go:build cuda && gpu

package cu

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// addPTX is a kernel written in PTX (so the test needs no NVRTC):
// add_u32(p, n, add) adds add to the n 4-byte words at p.
const addPTX = `
.version 7.0
.target sm_50
.address_size 64

.visible .entry add_u32(
	.param .u64 p_ptr,
	.param .u64 p_n,
	.param .u32 p_add
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<7>;
	.reg .b64 %rd<7>;

	ld.param.u64 %rd1, [p_ptr];
	ld.param.u64 %rd2, [p_n];
	ld.param.u32 %r1, [p_add];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	cvt.u64.u32 %rd3, %r5;
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd4, %rd1;
	shl.b64 %rd5, %rd3, 2;
	add.s64 %rd6, %rd4, %rd5;
	ld.global.u32 %r6, [%rd6];
	add.s32 %r6, %r6, %r1;
	st.global.u32 [%rd6], %r6;
DONE:
	ret;
}
`

// gpuSetup makes device 0's primary context current on a locked thread.
func gpuSetup(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	lib, err := Library()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	n, err := NumDevices()
	if err != nil || n < 1 {
		t.Fatalf("NumDevices = %d, %v", n, err)
	}
	ctx, err := Device(0).RetainPrimaryCtx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Device(0).ReleasePrimaryCtx() })
	if err := SetCurrentContext(ctx); err != nil {
		t.Fatal(err)
	}
	if cur, err := CurrentContext(); err != nil || cur != ctx {
		t.Fatalf("CurrentContext = %v, %v; want %v", cur, err, ctx)
	}
	t.Logf("%s, %d device(s)", lib, n)
}

func readWords(t *testing.T, p DevicePtr, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	if err := MemcpyDtoH(unsafe.Pointer(&out[0]), p, int64(4*n)); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantAll(t *testing.T, what string, got []uint32, want uint32) {
	t.Helper()
	for i, v := range got {
		if v != want {
			t.Fatalf("%s: word %d = %d, want %d", what, i, v, want)
		}
	}
}

func TestGPUDevice(t *testing.T) {
	gpuSetup(t)
	d := Device(0)
	name, err := d.Name()
	if err != nil || name == "" {
		t.Fatalf("Name = %q, %v", name, err)
	}
	attrs, err := d.Attributes(MultiprocessorCount, ComputeCapabilityMajor, ComputeCapabilityMinor)
	if err != nil || attrs[0] < 1 || attrs[1] < 3 {
		t.Fatalf("Attributes = %v, %v", attrs, err)
	}
	mem, err := d.TotalMem()
	if err != nil || mem < 1<<30 {
		t.Fatalf("TotalMem = %d, %v", mem, err)
	}
	bus, err := d.PCIBusID()
	if err != nil || bus == "" {
		t.Fatalf("PCIBusID = %q, %v", bus, err)
	}
	v, err := DriverVersion()
	if err != nil || v < 11000 {
		t.Fatalf("DriverVersion = %d, %v", v, err)
	}
	t.Logf("%s: %d SMs, sm_%d%d, %d GiB, bus %s, driver %d", name, attrs[0], attrs[1], attrs[2], mem>>30, bus, v)
	if missing := MissingSymbols(); len(missing) > 0 {
		t.Errorf("driver lacks %v", missing)
	}
}

func TestGPUMemoryAndLaunch(t *testing.T) {
	gpuSetup(t)
	const n = 1000
	p, err := MemAlloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(p)
	host := make([]uint32, n)
	for i := range host {
		host[i] = 7
	}
	if err := MemcpyHtoD(p, unsafe.Pointer(&host[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "after HtoD", readWords(t, p, n), 7)
	if err := MemsetD32(p, 5, n); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "after MemsetD32", readWords(t, p, n), 5)

	mod, err := LoadData(addPTX)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	fn, err := mod.Function("add_u32")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Function("no_such_kernel"); !errors.Is(err, NotFound) {
		t.Errorf("missing kernel: %v, want CUDA_ERROR_NOT_FOUND", err)
	}
	if regs, err := fn.Attribute(NumRegs); err != nil || regs <= 0 {
		t.Errorf("NumRegs = %d, %v", regs, err)
	}
	if blocks, err := fn.MaxActiveBlocksPerMultiProcessor(256, 0); err != nil || blocks <= 0 {
		t.Errorf("MaxActiveBlocksPerMultiProcessor = %d, %v", blocks, err)
	}

	// 8-byte parameters, gorgonia's convention; the u32 reads the low bytes.
	ptr, cnt, add := uint64(p), uint64(n), uint64(3)
	args := []unsafe.Pointer{unsafe.Pointer(&ptr), unsafe.Pointer(&cnt), unsafe.Pointer(&add)}
	if err := fn.LaunchAndSync((n+255)/256, 1, 1, 256, 1, 1, 0, Stream{}, args); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "after Launch", readWords(t, p, n), 8)

	// A packed block with a 4-byte parameter at its natural offset.
	blob := binary.LittleEndian.AppendUint64(nil, uint64(p))
	blob = binary.LittleEndian.AppendUint64(blob, n)
	blob = binary.LittleEndian.AppendUint32(blob, 2)
	s, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := fn.LaunchBlob((n+255)/256, 256, 0, s, blob, []int{0, 8, 16}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "after LaunchBlob", readWords(t, p, n), 10)

	if _, err := MemAlloc(1 << 52); !errors.Is(err, OutOfMemory) {
		t.Errorf("MemAlloc(4 PiB) = %v, want CUDA_ERROR_OUT_OF_MEMORY", err)
	} else {
		t.Logf("expected error: %v", err)
	}
}

func TestGPUStreamsEventsFlags(t *testing.T) {
	gpuSetup(t)
	const n = 256
	a, err := MemAlloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(a)
	b, err := MemAlloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(b)
	flag, err := MemAlloc(4)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(flag)
	if err := MemsetD8(flag, 0, 4); err != nil {
		t.Fatal(err)
	}
	s1, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Destroy()
	s2, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Destroy()
	start, err := MakeEvent(DefaultEvent)
	if err != nil {
		t.Fatal(err)
	}
	defer DestroyEvent(&start)
	done, err := MakeEvent(DefaultEvent)
	if err != nil {
		t.Fatal(err)
	}
	defer DestroyEvent(&done)

	// s2 waits on a flag s1 sets after filling a; then s2 copies a to b.
	if err := s2.WaitOnValue32(flag, 1, WaitValueGEQ); err != nil {
		t.Fatal(err)
	}
	if err := MemcpyDtoDAsync(b, a, 4*n, s2); err != nil {
		t.Fatal(err)
	}
	if err := start.Record(s1); err != nil {
		t.Fatal(err)
	}
	if err := MemsetD32Async(a, 0x01020304, n, s1); err != nil {
		t.Fatal(err)
	}
	if err := s1.WriteValue32(flag, 1, WriteValueDefault); err != nil {
		t.Fatal(err)
	}
	if err := done.Record(s1); err != nil {
		t.Fatal(err)
	}
	if err := s2.Wait(done, 0); err != nil {
		t.Fatal(err)
	}
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "copy after the flag", readWords(t, b, n), 0x01020304)
	if err := done.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if ms, err := start.Elapsed(done); err != nil || ms < 0 {
		t.Errorf("Elapsed = %v, %v", ms, err)
	}
	if err := MemsetD8Async(a, 0xAB, 4*n, s1); err != nil {
		t.Fatal(err)
	}
	if err := MemsetD16Async(a, 0xCDCD, 2, s1); err != nil {
		t.Fatal(err)
	}
	if err := s1.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got := readWords(t, a, n)
	if got[0] != 0xCDCDCDCD || got[1] != 0xABABABAB {
		t.Errorf("after memsets: %#x %#x", got[0], got[1])
	}
	if _, err := IpcGetMemHandle(a); err != nil {
		t.Errorf("IpcGetMemHandle: %v", err)
	}
}

func TestGPUGraph(t *testing.T) {
	gpuSetup(t)
	const n = 512
	p, err := MemAlloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(p)
	if err := MemsetD32(p, 0, n); err != nil {
		t.Fatal(err)
	}
	mod, err := LoadData(addPTX)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	fn, err := mod.Function("add_u32")
	if err != nil {
		t.Fatal(err)
	}
	s, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	ptr, cnt, add := uint64(p), uint64(n), uint64(1)
	args := []unsafe.Pointer{unsafe.Pointer(&ptr), unsafe.Pointer(&cnt), unsafe.Pointer(&add)}
	if err := s.BeginCapture(CaptureRelaxed); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := fn.Launch((n+255)/256, 1, 1, 256, 1, 1, 0, s, args); err != nil {
			t.Fatal(err)
		}
	}
	g, err := s.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Destroy()
	wantAll(t, "captured, not run", readWords(t, p, n), 0)
	for i := 0; i < 3; i++ {
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "after 3 replays of 2 launches", readWords(t, p, n), 6)
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := g.Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
}

func TestGPUTensorMap(t *testing.T) {
	gpuSetup(t)
	major, err := Device(0).Attribute(ComputeCapabilityMajor)
	if err != nil {
		t.Fatal(err)
	}
	if major < 9 {
		t.Skipf("tensor maps need sm_90, this is sm_%d", major*10)
	}
	p, err := MemAlloc(128 * 128 * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer MemFree(p)
	// bf16 128x128, 64x64 boxes, 128B swizzle, 256B L2 promotion.
	m, err := TensorMapEncodeTiled(9, p, []uint64{128, 128}, []uint64{256}, []uint32{64, 64}, []uint32{1, 1}, 0, 3, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m == (TensorMap{}) {
		t.Error("encoded tensor map is all zero")
	}
	if _, err := TensorMapEncodeTiled(9, p+1, []uint64{128, 128}, []uint64{256}, []uint32{64, 64}, []uint32{1, 1}, 0, 3, 3, 0); err == nil {
		t.Error("a misaligned address encoded without error")
	}
}

// TestGPUGraphHoldsCounter: a capture's graph holds a counter (a CUDA user
// object) until the graph and its executable are destroyed and their
// launches done; the async pool allocates and frees without a sync.
func TestGPUGraphHoldsCounter(t *testing.T) {
	gpuSetup(t)
	s, err := MakeStream(NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	c := NewCounter()
	defer c.Free()
	if capturing, _, _, err := s.CaptureGraph(); err != nil || capturing {
		t.Fatalf("before capture: capturing %v, %v", capturing, err)
	}
	p, err := MemAllocAsync(4096, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginCapture(CaptureGlobal); err != nil {
		t.Fatal(err)
	}
	capturing, id, graph, err := s.CaptureGraph()
	if err != nil || !capturing || id == 0 {
		t.Fatalf("in capture: capturing %v, id %d, %v", capturing, id, err)
	}
	if err := HoldCounter(graph, c.Ptr()); err != nil {
		t.Fatal(err)
	}
	if err := MemsetD8Async(p, 1, 4096, s); err != nil {
		t.Fatal(err)
	}
	g, err := s.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	if c.Load() != 1 {
		t.Fatalf("count %d while the graph lives, want 1", c.Load())
	}
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	// The destructor runs on a driver thread, shortly after.
	for i := 0; i < 1000 && c.Load() != 0; i++ {
		time.Sleep(time.Millisecond)
	}
	if c.Load() != 0 {
		t.Fatalf("count %d after the graph was destroyed, want 0", c.Load())
	}
	if err := MemFreeAsync(p, s); err != nil {
		t.Fatal(err)
	}
	free, total, err := MemGetInfo()
	if err != nil || free <= 0 || total < free {
		t.Fatalf("MemGetInfo %d of %d, %v", free, total, err)
	}
}
