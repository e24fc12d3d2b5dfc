//go:build cuda

package cudamem

import (
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/nvrtc"
)

// Mapped is one rank's view of symmetric memory that another runtime
// allocated and mapped (torch's symm_mem, for symmtune.torch): every rank's
// region as mapped here and the device pointer table [data..., pads...] of
// barrier.cuh, given as plain values. It owns only the barrier kernel it
// loads; the memory stays the other runtime's. Unlike Team it has no thread
// of its own: its methods run on the caller's thread, in the context
// current there (torch's), which must be device ordinal's.
type Mapped struct {
	rank, world      int
	data             []cu.DevicePtr
	table            cu.DevicePtr
	ccMajor, ccMinor int
	sms              int
	compiler         nvrtc.Compiler
	barrierMod       cu.Module
	barrierFn        cu.Function
}

// NewMapped describes rank of world over data (every rank's region as
// mapped here) and table (device array of 2*world u64: data, then pads),
// on device ordinal, and loads the barrier kernel into the current context.
func NewMapped(rank, world int, data []cu.DevicePtr, table cu.DevicePtr, ordinal int) (*Mapped, error) {
	switch {
	case world < 1 || world > MaxWorld:
		return nil, fmt.Errorf("world %d: want 1..%d", world, MaxWorld)
	case rank < 0 || rank >= world:
		return nil, fmt.Errorf("rank %d of world %d", rank, world)
	case len(data) != world:
		return nil, fmt.Errorf("%d regions for world %d", len(data), world)
	case table == 0:
		return nil, errors.New("no pointer table")
	}
	for q, d := range data {
		if d == 0 {
			return nil, fmt.Errorf("rank %d's region is NULL", q)
		}
	}
	m := &Mapped{rank: rank, world: world, data: append([]cu.DevicePtr(nil), data...), table: table}
	attrs, err := cu.Device(ordinal).Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount)
	if err != nil {
		return nil, fmt.Errorf("device %d: %w", ordinal, err)
	}
	m.ccMajor, m.ccMinor, m.sms = attrs[0], attrs[1], attrs[2]
	m.compiler = nvrtc.Compiler{Arch: nvrtc.Arch(m.ccMajor, m.ccMinor)}
	if m.barrierMod, m.barrierFn, err = loadBarrier(m.compiler); err != nil {
		return nil, err
	}
	return m, nil
}

// Rank of this process.
func (m *Mapped) Rank() int { return m.rank }

// World is the number of ranks.
func (m *Mapped) World() int { return m.world }

// Data is rank q's region as mapped here.
func (m *Mapped) Data(q int) cu.DevicePtr { return m.data[q] }

// ComputeCapability of the GPU.
func (m *Mapped) ComputeCapability() (major, minor int) { return m.ccMajor, m.ccMinor }

// SMs is the GPU's multiprocessor count.
func (m *Mapped) SMs() int { return m.sms }

// Compiler is an NVRTC compiler for the GPU's architecture.
func (m *Mapped) Compiler() nvrtc.Compiler { return m.compiler }

// Barrier enqueues the cross-GPU barrier on stream (see Team.Barrier).
func (m *Mapped) Barrier(stream cu.Stream) error {
	return launchBarrier(m.barrierFn, m.table, m.rank, m.world, stream)
}

// Close unloads the barrier kernel.
func (m *Mapped) Close() error {
	if m.barrierMod == (cu.Module{}) {
		return nil
	}
	err := m.barrierMod.Unload()
	m.barrierMod, m.barrierFn = cu.Module{}, cu.Function{}
	return err
}

// PtrTable is the device array [data..., pads...] the kernels index.
func (m *Mapped) PtrTable() cu.DevicePtr { return m.table }
