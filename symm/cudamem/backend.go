//go:build cuda

package cudamem

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/symm"
)

// align is the alignment of each rank's region.
const align = 4096

// Backend is the "cuda" symmetric-memory backend.
type Backend struct{}

// Name implements symm.Backend.
func (Backend) Name() string { return "cuda" }

// Hardware fingerprints GPUs 0..world-1 as ranks see them: name, SMs,
// memory, compute capability and driver of GPU 0, and the link between the
// ranks' GPUs (active NVLinks of GPU 0, else PCIe).
func (Backend) Hardware(world int) (hardware.Fingerprint, error) {
	var f hardware.Fingerprint
	n, err := cu.NumDevices()
	if err != nil {
		return f, fmt.Errorf("count CUDA devices: %w", err)
	}
	if world < 1 || world > n {
		return f, fmt.Errorf("world %d but %d CUDA devices visible", world, n)
	}
	dev := cu.Device(0)
	name, err := dev.Name()
	if err != nil {
		return f, fmt.Errorf("device name: %w", err)
	}
	attrs, err := dev.Attributes(cu.MultiprocessorCount, cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor)
	if err != nil {
		return f, fmt.Errorf("device attributes: %w", err)
	}
	mem, err := dev.TotalMem()
	if err != nil {
		return f, fmt.Errorf("device memory: %w", err)
	}
	drv, err := kernelDriverVersion()
	if err != nil {
		// The CUDA driver API version is coarser but always there.
		if drv, err = driverVersion(); err != nil {
			return f, err
		}
		drv = "cuda" + drv
	}
	for i := 1; i < world; i++ {
		other, err := cu.Device(i).Name()
		if err != nil {
			return f, fmt.Errorf("device %d name: %w", i, err)
		}
		if other != name {
			return f, fmt.Errorf("mixed GPUs: device 0 is %s, device %d is %s", name, i, other)
		}
	}
	f = hardware.Fingerprint{
		Kind:         "gpu",
		Name:         name,
		Count:        world,
		SMs:          attrs[0],
		MemoryMiB:    mem >> 20,
		Compute:      fmt.Sprintf("%d.%d", attrs[1], attrs[2]),
		Driver:       drv,
		Interconnect: interconnect(world),
	}
	return f, nil
}

// interconnect describes how the ranks' GPUs are linked: "NVLink x<active
// links of GPU 0>" when NVML sees NVLinks, else "PCIe P2P" or "PCIe".
func interconnect(world int) string {
	if world < 2 {
		return "none"
	}
	if bus, err := pciBusID(0); err == nil {
		if links, err := nvlinkCount(bus); err == nil && links > 0 {
			return fmt.Sprintf("NVLink x%d", links)
		} else if err != nil {
			slog.Debug("nvml link count unavailable", "err", err)
		}
	}
	access, _, err := p2p(0, 1)
	if err == nil && access {
		return "PCIe P2P"
	}
	return "PCIe"
}

// Ordinal is the device a rank uses: rank among the visible devices.
func Ordinal(rank int) (int, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return 0, fmt.Errorf("count CUDA devices: %w", err)
	}
	if rank >= n {
		return 0, fmt.Errorf("rank %d needs GPU ordinal %d but only %d are visible (CUDA_VISIBLE_DEVICES=%q)", rank, rank, n, os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	return rank, nil
}

// thread runs closures on one OS thread with the rank's context current.
type thread struct {
	fns chan func()
}

func startThread(ordinal int) (*thread, cu.CUContext, error) {
	t := &thread{fns: make(chan func())}
	type started struct {
		ctx cu.CUContext
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		dev := cu.Device(ordinal)
		ctx, err := dev.RetainPrimaryCtx()
		if err != nil {
			ch <- started{err: fmt.Errorf("retain primary context of GPU %d: %w", ordinal, err)}
			return
		}
		if err := cu.SetCurrentContext(ctx); err != nil {
			ch <- started{err: fmt.Errorf("make GPU %d context current: %w", ordinal, err)}
			return
		}
		ch <- started{ctx: ctx}
		for f := range t.fns {
			f()
		}
		_ = dev.ReleasePrimaryCtx()
	}()
	s := <-ch
	if s.err != nil {
		return nil, cu.CUContext{}, s.err
	}
	return t, s.ctx, nil
}

// do runs f on the thread and waits for it.
func (t *thread) do(f func() error) error {
	done := make(chan error, 1)
	t.fns <- func() { done <- f() }
	return <-done
}

func (t *thread) stop() { close(t.fns) }

// blob is what a rank exports: its device ordinal, region size and the IPC
// handle of the allocation (data region, then pads).
type blob struct {
	Ordinal   int32
	DataBytes int64
	Handle    []byte
}

var blobMagic = [4]byte{'S', 'Y', 'C', '1'}

func (b blob) encode() []byte {
	out := make([]byte, 0, 16+len(b.Handle))
	out = append(out, blobMagic[:]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(b.Ordinal))
	out = binary.LittleEndian.AppendUint64(out, uint64(b.DataBytes))
	return append(out, b.Handle...)
}

func decodeBlob(p []byte) (blob, error) {
	if len(p) != 16+ipcHandleSize || [4]byte(p[:4]) != blobMagic {
		return blob{}, fmt.Errorf("not a cuda symmetric-memory blob (%d bytes)", len(p))
	}
	return blob{
		Ordinal:   int32(binary.LittleEndian.Uint32(p[4:])),
		DataBytes: int64(binary.LittleEndian.Uint64(p[8:])),
		Handle:    p[16:],
	}, nil
}

func roundUp(x, a int64) int64 { return (x + a - 1) / a * a }

// Allocate implements symm.Backend: one cuMemAlloc of the data region
// (rounded up to 4 KiB) followed by the signal pads, zeroed, exported by IPC.
func (Backend) Allocate(ctx context.Context, rank, world int, bytes int64, groupID string) (symm.Pending, []byte, error) {
	if world < 1 || world > MaxWorld {
		return nil, nil, fmt.Errorf("world %d outside 1..%d", world, MaxWorld)
	}
	if bytes < 0 {
		return nil, nil, fmt.Errorf("negative region size %d", bytes)
	}
	ord, err := Ordinal(rank)
	if err != nil {
		return nil, nil, err
	}
	th, cuctx, err := startThread(ord)
	if err != nil {
		return nil, nil, err
	}
	p := &pending{rank: rank, world: world, ordinal: ord, th: th, ctx: cuctx, dataBytes: roundUp(bytes, align)}
	var handle []byte
	err = th.do(func() error {
		base, err := cu.MemAlloc(p.dataBytes + PadBytes)
		if err != nil {
			return fmt.Errorf("cuMemAlloc %d bytes on GPU %d: %w", p.dataBytes+PadBytes, ord, err)
		}
		p.base = base
		if err := cu.MemsetD8(base+cu.DevicePtr(p.dataBytes), 0, PadBytes); err != nil {
			return fmt.Errorf("zero signal pads: %w", err)
		}
		if err := cu.Synchronize(); err != nil {
			return fmt.Errorf("synchronize after zeroing pads: %w", err)
		}
		handle, err = ipcGet(base)
		return err
	})
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("rank %d group %s: %w", rank, groupID, err)
	}
	b := blob{Ordinal: int32(ord), DataBytes: p.dataBytes, Handle: handle}
	return p, b.encode(), nil
}

type pending struct {
	rank, world, ordinal int
	th                   *thread
	ctx                  cu.CUContext
	dataBytes            int64
	base                 cu.DevicePtr
}

func (p *pending) Close() error {
	if p.th == nil {
		return nil
	}
	var err error
	if p.base != 0 {
		err = p.th.do(func() error { return cu.MemFree(p.base) })
		p.base = 0
	}
	p.th.stop()
	p.th = nil
	return err
}

// Connect maps every peer's region and builds the kernels' pointer table.
func (p *pending) Connect(ctx context.Context, blobs [][]byte) (symm.Team, error) {
	if len(blobs) != p.world {
		return nil, fmt.Errorf("%d blobs for world %d", len(blobs), p.world)
	}
	t := &Team{rank: p.rank, world: p.world, ordinal: p.ordinal, th: p.th, ctx: p.ctx, dataBytes: p.dataBytes,
		data: make([]cu.DevicePtr, p.world), pads: make([]cu.DevicePtr, p.world)}
	err := p.th.do(func() error {
		for q, raw := range blobs {
			b, err := decodeBlob(raw)
			if err != nil {
				return fmt.Errorf("rank %d's blob: %w", q, err)
			}
			if b.DataBytes != p.dataBytes {
				return fmt.Errorf("rank %d has a %d-byte region, rank %d %d", q, b.DataBytes, p.rank, p.dataBytes)
			}
			base := p.base
			if q != p.rank {
				if base, err = ipcOpen(b.Handle); err != nil {
					return fmt.Errorf("map rank %d (GPU %d): %w", q, b.Ordinal, err)
				}
				t.opened = append(t.opened, base)
			}
			t.data[q] = base
			t.pads[q] = base + cu.DevicePtr(p.dataBytes)
		}
		table := make([]uint64, 2*p.world)
		for q := 0; q < p.world; q++ {
			table[q] = uint64(t.data[q])
			table[p.world+q] = uint64(t.pads[q])
		}
		var err error
		if t.table, err = cu.MemAlloc(int64(8 * len(table))); err != nil {
			return fmt.Errorf("pointer table: %w", err)
		}
		if err := cu.MemcpyHtoD(t.table, unsafe.Pointer(&table[0]), int64(8*len(table))); err != nil {
			return fmt.Errorf("copy pointer table: %w", err)
		}
		dev := cu.Device(p.ordinal)
		attrs, err := dev.Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount)
		if err != nil {
			return fmt.Errorf("compute capability: %w", err)
		}
		t.ccMajor, t.ccMinor, t.sms = attrs[0], attrs[1], attrs[2]
		t.compiler = nvrtc.Compiler{Arch: nvrtc.Arch(t.ccMajor, t.ccMinor), Options: TimeoutOptions(TunerTimeout)}
		t.barrierMod, t.barrierFn, err = loadBarrier(t.compiler)
		return err
	})
	// The team owns the thread and the allocation from here on, also on error.
	t.base = p.base
	p.th, p.base = nil, 0
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("rank %d: %w", p.rank, err)
	}
	return t, nil
}
