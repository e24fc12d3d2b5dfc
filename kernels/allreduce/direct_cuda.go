//go:build cuda

package allreduce

import (
	"fmt"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// loadDirect takes the push two-shot's DirectEntry from m's module, for
// Verify. Where its grid cannot all be resident the Runner stages plain
// tensors instead, and Verify skips it (m.direct stays unset).
func (m *arModule) loadDirect(sms int) error {
	fn, fits, err := directEntry(m.mod, m.cfg, sms)
	if err != nil {
		return err
	}
	if fits {
		m.direct, m.hasDirect = fn, true
	}
	return nil
}

// directEntry is mod's DirectEntry, and whether all of cfg's blocks of it
// can be resident at once on sms SMs (its per-block barriers need the
// whole grid; it uses more registers than the in-place entry).
func directEntry(mod cu.Module, cfg cudaCfg, sms int) (fn cu.Function, fits bool, err error) {
	if fn, err = mod.Function(DirectEntry); err != nil {
		return fn, false, fmt.Errorf("%s kernel: %w", DirectEntry, err)
	}
	perSM, err := fn.MaxActiveBlocksPerMultiProcessor(int(cfg.threads), 0)
	if err != nil {
		return fn, false, fmt.Errorf("occupancy of %s: %w", DirectEntry, err)
	}
	return fn, int64(perSM)*int64(sms) >= cfg.blocks, nil
}

// plainBytes is the plain buffer Verify's direct call runs on: the
// problem, the guards on both sides, and room for the offset.
func (in *cudaInstance) plainBytes() int64 { return in.npad*int64(in.elt) + 2*directGuard + 16 }

// enqueueDirect enqueues Verify's direct call c of config m: the plain
// buffer poisoned (NaN), c's inputs filled at its offset past the first
// guard, DirectEntry on it (the scratch and output regions where the
// in-place call has them) with the Runner's outoff (directOutOff: the
// peers' sums land over the input region, as in symmtune.torch), and the
// check of its n elements into res[3:6]. No barrier is needed first: the
// in-place call's last barrier released the scratch, and peers write this
// rank's input region only after a barrier that this call's kernel joins,
// after this rank's in-place call and its check (stream order); Bench and
// the next Verify fill the input region again. Its inputs differ from the
// in-place call's, so that call's data left in the regions cannot pass.
func (in *cudaInstance) enqueueDirect(m *arModule, c directCase) error {
	if in.plain == 0 {
		var err error
		if in.plain, err = cu.MemAlloc(in.plainBytes()); err != nil {
			return fmt.Errorf("allocate the plain tensor: %w", err)
		}
	}
	t := in.team
	x := in.plain + directGuard + cu.DevicePtr(c.off)
	if err := cu.MemsetD32Async(in.plain, 0xFFFFFFFF, in.plainBytes()/4, in.stream); err != nil {
		return fmt.Errorf("poison the plain tensor: %w", err)
	}
	fill := cudamem.Args(uint64(x), uint64(c.n), c.seed, uint64(t.Rank()))
	if err := in.fill.Launch(utilBlocks(c.n), 1, 1, 256, 1, 1, 0, in.stream, fill); err != nil {
		return fmt.Errorf("launch fill: %w", err)
	}
	nvec := Padded(c.n, in.elt, t.World()) * int64(in.elt) / 16
	args := cudamem.Args(uint64(t.PtrTable()), uint64(x), uint64(nvec), uint64(t.Rank()), uint64(in.npad)*uint64(in.elt), uint64(c.n), directOutOff)
	if err := m.direct.Launch(int(m.cfg.blocks), 1, 1, int(m.cfg.threads), 1, 1, 0, in.stream, args); err != nil {
		return fmt.Errorf("launch %s: %w", DirectEntry, err)
	}
	check := cudamem.Args(uint64(x), uint64(c.n), c.seed, uint64(in.res+3*8))
	if err := in.check.Launch(utilBlocks(c.n), 1, 1, 256, 1, 1, 0, in.stream, check); err != nil {
		return fmt.Errorf("launch check: %w", err)
	}
	return nil
}

// directGuardsHeld says whether Verify's direct call c left the bytes
// around its tensor poisoned (nothing stored before it or past n). After
// the stream's work is done.
func (in *cudaInstance) directGuardsHeld(c directCase) (bool, error) {
	var buf [directGuard + 16]byte
	x := in.plain + directGuard + cu.DevicePtr(c.off)
	// Before the tensor: the guard and the offset; past it: a guard.
	before, after := directGuard+c.off, x+cu.DevicePtr(c.n*int64(in.elt))
	if err := cu.MemcpyDtoH(unsafe.Pointer(&buf[0]), in.plain, before); err != nil {
		return false, fmt.Errorf("read the guard before the plain tensor: %w", err)
	}
	for _, b := range buf[:before] {
		if b != 0xFF {
			return false, nil
		}
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&buf[0]), after, directGuard); err != nil {
		return false, fmt.Errorf("read the guard past the plain tensor: %w", err)
	}
	for _, b := range buf[:directGuard] {
		if b != 0xFF {
			return false, nil
		}
	}
	return true, nil
}
