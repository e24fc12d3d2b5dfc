package tuner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/shm"
)

// group is world plugin processes set up for one problem, one per rank.
type group struct {
	ranks   []*rankProc
	backend string
	problem space.Problem
	id      string // the group ID its shared-memory names carry
	// setupTook is how long setup and connect took on all ranks together.
	setupTook time.Duration
}

// callError is a plugin call that failed on some rank, classified by what
// the trial's status should be.
type callError struct {
	Status Status
	Rank   int
	Phase  string
	Err    error
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s on rank %d during %s: %v", e.Status, e.Rank, e.Phase, e.Err)
}

func (e *callError) Unwrap() error { return e.Err }

// startGroup launches the remaining ranks next to an already running rank
// 0, allocates every rank's symmetric memory and connects them.
func startGroup(ctx context.Context, spec launchSpec, first *rankProc, world int, backend string, p space.Problem, groupID string, timeout time.Duration) (*group, error) {
	g := &group{ranks: make([]*rankProc, world), backend: backend, problem: p, id: groupID}
	g.ranks[0] = first
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for r := 1; r < world; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rp, err := launch(spec, r)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			g.ranks[r] = rp
		}(r)
	}
	wg.Wait()
	if len(errs) > 0 {
		g.kill()
		return nil, errors.Join(errs...)
	}
	blobs := make([][]byte, world)
	began := time.Now()
	err := g.fanout(ctx, "setup", timeout, func(ctx context.Context, r *rankProc) error {
		resp, err := r.kernel.Setup(ctx, &pb.SetupRequest{
			Backend: backend, Rank: int32(r.rank), World: int32(world),
			Problem: sdk.ProblemToProto(p), GroupId: groupID,
		})
		if err != nil {
			return err
		}
		blobs[r.rank] = resp.GetBlob()
		return nil
	})
	if err == nil {
		err = g.fanout(ctx, "connect", timeout, func(ctx context.Context, r *rankProc) error {
			_, err := r.kernel.Connect(ctx, &pb.ConnectRequest{Blobs: blobs})
			return err
		})
	}
	if err != nil {
		g.kill()
		return nil, fmt.Errorf("set up %d ranks: %w", world, err)
	}
	g.setupTook = time.Since(began)
	return g, nil
}

// fanout calls fn on every rank at once, each under the same deadline, and
// classifies the first real failure. When one rank fails the others are
// cancelled at once: they would otherwise wait in a barrier the failed rank
// never reaches, and report a hang that is only an echo of the failure.
func (g *group) fanout(ctx context.Context, phase string, timeout time.Duration, fn func(ctx context.Context, r *rankProc) error) error {
	deadline, cancelDeadline := context.WithTimeout(ctx, timeout)
	defer cancelDeadline()
	cctx, cancel := context.WithCancelCause(deadline)
	defer cancel(nil)
	errs := make([]error, len(g.ranks))
	var wg sync.WaitGroup
	for i, r := range g.ranks {
		wg.Add(1)
		go func(i int, r *rankProc) {
			defer wg.Done()
			if err := fn(cctx, r); err != nil {
				errs[i] = err
				cancel(errSiblingFailed)
			}
		}(i, r)
	}
	wg.Wait()
	return g.classify(ctx, deadline, phase, errs)
}

var errSiblingFailed = errors.New("another rank failed")

// classify picks the error that explains the failure: a crashed process
// first (its peers' errors are consequences), then a missed deadline, then
// an error the plugin returned. Errors caused by our own cancellation of
// the other ranks are ignored.
func (g *group) classify(parent, deadline context.Context, phase string, errs []error) error {
	var first *callError
	consider := func(e *callError) {
		rank := map[Status]int{StatusCrash: 0, StatusHang: 1, StatusFailed: 2}
		if first == nil || rank[e.Status] < rank[first.Status] {
			first = e
		}
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		r := g.ranks[i]
		switch {
		case r.exited(200 * time.Millisecond):
			msg := "plugin process exited"
			if note := r.exitNote(); note != "" {
				msg += " (" + note + ")"
			}
			consider(&callError{StatusCrash, i, phase, fmt.Errorf("%s: %w", msg, err)})
		case parent.Err() != nil:
			return parent.Err()
		case deadline.Err() == context.DeadlineExceeded || status.Code(err) == codes.DeadlineExceeded:
			consider(&callError{StatusHang, i, phase, fmt.Errorf("no answer before the %s deadline", phase)})
		case status.Code(err) == codes.Canceled:
			// Cancelled because a sibling failed: not the cause.
		case status.Code(err) == codes.Unavailable:
			if note := r.exitNote(); note != "" {
				err = fmt.Errorf("%w (%s)", err, note)
			}
			consider(&callError{StatusCrash, i, phase, err})
		default:
			consider(&callError{StatusFailed, i, phase, errors.New(status.Convert(err).Message())})
		}
	}
	if first == nil {
		return nil
	}
	return first
}

// kill ends every rank process at once, then removes the group's
// shared-memory files. Ranks unlink their own files at Connect, but a rank
// killed between Setup and the end of Connect (a crash, a hang or an
// interrupt while the group is being set up) never gets to, and nothing
// else would.
func (g *group) kill() {
	var wg sync.WaitGroup
	for _, r := range g.ranks {
		if r != nil {
			wg.Add(1)
			go func(r *rankProc) { defer wg.Done(); r.kill() }(r)
		}
	}
	wg.Wait()
	g.removeSHM()
}

// removeSHM removes the CPU backend's files of this group, if any are left.
// Only called once every rank is dead, so no live rank can lose a region.
func (g *group) removeSHM() {
	if g.backend != "cpu" || g.id == "" || strings.ContainsAny(g.id, "/*?[\\") {
		return
	}
	files, _ := filepath.Glob(filepath.Join(shm.Dir(), shm.FilePrefix+g.id+"-r*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
}

// sweepDeadHostsSHM removes shared-memory files left by hosts that no
// longer run. Files are unlinked as soon as all ranks map them, so only a
// host killed while its group was being set up leaves any behind.
func sweepDeadHostsSHM() {
	files, _ := filepath.Glob(filepath.Join(shm.Dir(), shm.FilePrefix+"*-*-r*"))
	for _, f := range files {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(f), shm.FilePrefix), "-")
		if pid, err := strconv.Atoi(pidText); ok && err == nil && hostGone(pid) {
			_ = os.Remove(f)
		}
	}
}

// close tears every rank down in order, killing those that do not answer.
func (g *group) close(ctx context.Context) {
	var wg sync.WaitGroup
	for _, r := range g.ranks {
		if r != nil {
			wg.Add(1)
			go func(r *rankProc) { defer wg.Done(); r.stop(ctx) }(r)
		}
	}
	wg.Wait()
	g.removeSHM()
}
