// Package gemmtest runs a kernel's ranks as goroutines of one test process
// over real shared-memory regions, so the GEMM plugins' tests exercise the
// same mappings, flags and barriers as plugin processes do, without the
// host. It is imported by tests only.
package gemmtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/shm"
)

// Timeout bounds every in-process call, so a schedule that deadlocks fails
// the test instead of hanging it.
const Timeout = 2 * time.Minute

// OnAll runs f for every rank concurrently and joins the errors.
func OnAll(world int, f func(rank int) error) error {
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(r); err != nil {
				errs[r] = fmt.Errorf("rank %d: %w", r, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

var groupSeq struct {
	sync.Mutex
	n int
}

// Open allocates and connects world shared-memory regions of the size k
// asks for, opens k on each rank, and closes everything when the test ends.
func Open(t testing.TB, k sdk.Kernel, p space.Problem, world int) []sdk.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	bytes, err := k.SymmetricBytes(p, world, "cpu")
	if err != nil {
		t.Fatalf("symmetric bytes: %v", err)
	}
	groupSeq.Lock()
	groupSeq.n++
	group := fmt.Sprintf("gemmtest-%d-%d", os.Getpid(), groupSeq.n)
	groupSeq.Unlock()
	pend := make([]symm.Pending, world)
	blobs := make([][]byte, world)
	for r := 0; r < world; r++ {
		pend[r], blobs[r], err = shm.Backend{}.Allocate(ctx, r, world, bytes, group)
		if err != nil {
			for _, q := range pend[:r] {
				q.Close()
			}
			t.Fatalf("allocate rank %d: %v", r, err)
		}
	}
	teams := make([]symm.Team, world)
	insts := make([]sdk.Instance, world)
	err = OnAll(world, func(r int) error {
		team, err := pend[r].Connect(ctx, blobs)
		if err != nil {
			pend[r].Close()
			return fmt.Errorf("connect: %w", err)
		}
		teams[r] = team
		insts[r], err = k.Open(ctx, team, p)
		return err
	})
	t.Cleanup(func() {
		for r := range insts {
			if insts[r] != nil {
				insts[r].Close()
			}
			if teams[r] != nil {
				teams[r].Close()
			}
		}
	})
	if err != nil {
		t.Fatalf("open %d ranks: %v", world, err)
	}
	return insts
}

// Verify runs Verify of c with seed on every rank and fails the test unless
// every rank's output passes.
func Verify(t testing.TB, insts []sdk.Instance, c space.Config, seed uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	res := make([]sdk.VerifyResult, len(insts))
	err := OnAll(len(insts), func(r int) error {
		if err := insts[r].Prepare(ctx, c); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		var err error
		res[r], err = insts[r].Verify(ctx, c, seed)
		return err
	})
	if err != nil {
		t.Fatalf("verify %s: %v", c, err)
	}
	for r, v := range res {
		if !v.OK {
			t.Errorf("verify %s seed %d: rank %d wrong: rel err %.3g: %s", c, seed, r, v.RelErr, v.Detail)
		}
	}
}

// Bench runs Bench of c on every rank and returns each rank's times.
func Bench(t testing.TB, insts []sdk.Instance, c space.Config, warmup, iters int) [][]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	times := make([][]float64, len(insts))
	err := OnAll(len(insts), func(r int) error {
		var err error
		times[r], err = insts[r].Bench(ctx, c, warmup, iters)
		if err == nil && len(times[r]) != iters {
			err = fmt.Errorf("got %d times for %d iterations", len(times[r]), iters)
		}
		return err
	})
	if err != nil {
		t.Fatalf("bench %s: %v", c, err)
	}
	return times
}
