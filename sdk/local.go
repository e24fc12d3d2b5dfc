package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
)

// VerifyLocal runs config c of k on world ranks inside this process, one
// goroutine per rank over backend b, the way a search's first trial does:
// Validate, SymmetricBytes, Allocate and Connect on every rank, Open,
// Prepare, then Verify under seed. It returns each rank's verdict. It is for
// a kernel's own tests (go test), which then need no host, no plugin binary
// and no gRPC: a wrong answer is a VerifyResult with OK false, a failure
// (a config Validate rejects included) an error.
func VerifyLocal(ctx context.Context, k Kernel, b symm.Backend, world int, p space.Problem, c space.Config, seed uint64) ([]VerifyResult, error) {
	if world < 1 {
		return nil, fmt.Errorf("world %d: want at least 1", world)
	}
	d := k.Describe()
	if err := d.Space.Check(c); err != nil {
		return nil, fmt.Errorf("config %s: %w", c, err)
	}
	if err := k.Validate(c, p, world, b.Name()); err != nil {
		return nil, fmt.Errorf("config %s rejected: %w", c, err)
	}
	n, err := k.SymmetricBytes(p, world, b.Name())
	if err != nil {
		return nil, err
	}
	// Every rank allocates before any connects, as the host's setup does.
	group := fmt.Sprintf("local-%s-%d-%d", d.Name, os.Getpid(), localGroups.Add(1))
	pending := make([]symm.Pending, world)
	blobs := make([][]byte, world)
	defer func() {
		for _, pd := range pending {
			if pd != nil {
				pd.Close()
			}
		}
	}()
	for r := range world {
		if pending[r], blobs[r], err = b.Allocate(ctx, r, world, n, group); err != nil {
			return nil, fmt.Errorf("rank %d: allocate: %w", r, err)
		}
	}
	// A rank that fails cancels the others, which may wait in a barrier.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make([]VerifyResult, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res[r], errs[r] = verifyRank(ctx, k, pending[r], blobs, p, c, seed); errs[r] != nil {
				errs[r] = fmt.Errorf("rank %d: %w", r, errs[r])
				cancel()
			}
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// localGroups numbers VerifyLocal's groups, so concurrent tests of one
// process never share a region's name.
var localGroups atomic.Int64

func verifyRank(ctx context.Context, k Kernel, pd symm.Pending, blobs [][]byte, p space.Problem, c space.Config, seed uint64) (VerifyResult, error) {
	team, err := pd.Connect(ctx, blobs)
	if err != nil {
		return VerifyResult{}, fmt.Errorf("connect: %w", err)
	}
	defer team.Close()
	in, err := k.Open(ctx, team, p)
	if err != nil {
		return VerifyResult{}, fmt.Errorf("open: %w", err)
	}
	defer in.Close()
	if err := in.Prepare(ctx, c); err != nil {
		return VerifyResult{}, fmt.Errorf("prepare: %w", err)
	}
	return in.Verify(ctx, c, seed)
}
