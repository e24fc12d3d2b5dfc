package tuner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// validateWorkers is how many Validate calls are in flight at once: a GEMM
// space holds over 200,000 configs, and one call after another took over a
// minute on the 2 x H100 machine (the setup deadline).
const validateWorkers = 16

// validateBatchSize is how many configs one ValidateBatch call carries.
// One round trip per config was 17 of a short GPU search's 21 s; at 512 a
// call, a 200,000-config space is 400 calls, and a call's message stays
// well under gRPC's 4 MiB limit (a config is tens of bytes).
const validateBatchSize = 512

// validatePerConfig is how much longer than the setup timeout a batch call
// may take per config it carries: a plugin validates a config in
// microseconds to a millisecond, so a full batch gets about 10 s more, and
// a plugin that hangs is still found out within a minute or so of the
// setup timeout.
const validatePerConfig = 20 * time.Millisecond

// validateBatchDeadline bounds one ValidateBatch call of n configs.
func validateBatchDeadline(setup time.Duration, n int) time.Duration {
	return setup + time.Duration(n)*validatePerConfig
}

// listBatch is how many configs listValid asks about at a time: enough
// for every worker to have batches in flight.
const listBatch = 4 * validateWorkers * validateBatchSize

// listValid goes through desc's space with the plugin's Validate and keeps
// the configs it accepts that match where: the default first (it is
// measured first and is the baseline), then the rest in the space's order,
// asked about listBatch at a time (space.Each), so that a space of millions
// of configs, most of them combinations the kernel refuses, costs the host
// no list of them all. defaultReason is why the default cannot run ("" if
// it can). Validate panics are the plugin's bug: warned about once.
func (ss *session) listValid(ctx context.Context, r *rankProc, desc sdk.Description, where space.Config) (valid []space.Config, defaultReason string, err error) {
	batch := []space.Config{desc.Default}
	first := true
	panics, firstPanic := 0, ""
	flush := func() error {
		reasons, err := ss.validate(ctx, r, batch)
		if err != nil {
			return err
		}
		if first {
			defaultReason, first = reasons[0], false
		}
		for i, c := range batch {
			if reasons[i] == "" {
				valid = append(valid, c)
			}
			if strings.Contains(reasons[i], " panicked: ") {
				if panics++; panics == 1 {
					firstPanic = reasons[i]
				}
			}
		}
		batch = batch[:0]
		return nil
	}
	desc.Space.Each(func(c space.Config) bool {
		if c.Equal(desc.Default) || !matches(c, where) {
			return true
		}
		if batch = append(batch, c); len(batch) == listBatch {
			err = flush()
		}
		return err == nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return nil, "", err
	}
	if panics > 0 {
		// A panic is the plugin's bug, not a config it cannot run: say so
		// once, rather than hide it among the invalid configs.
		ss.s.Logger.Warn("the kernel's Validate panicked; those configs are rejected", "kernel", ss.job.Kernel, "configs", panics, "first", firstPanic)
	}
	return valid, defaultReason, nil
}

// validate asks the kernel about every config: the reason each one cannot
// run the problem, "" for those that can. It sends validateBatchSize
// configs per ValidateBatch call, validateWorkers calls at a time; a plugin
// that does not implement ValidateBatch (an older one) is asked one config
// per Validate call instead, each under the setup timeout.
func (ss *session) validate(ctx context.Context, r *rankProc, cands []space.Config) ([]string, error) {
	reasons := make([]string, len(cands))
	chunks := (len(cands) + validateBatchSize - 1) / validateBatchSize
	chunk := func(i int) (int, []space.Config) {
		lo := i * validateBatchSize
		return lo, cands[lo:min(len(cands), lo+validateBatchSize)]
	}
	if chunks == 0 {
		return reasons, nil
	}
	// The first call says whether the plugin has the batch call at all.
	lo, cs := chunk(0)
	err := ss.validateBatch(ctx, r, cs, reasons[lo:])
	if status.Code(err) == codes.Unimplemented {
		ss.s.Logger.Debug("plugin has no ValidateBatch; validating one config per call", "plugin", ss.spec.Path)
		return reasons, ss.validateEach(ctx, r, cands, reasons)
	}
	if err != nil {
		return nil, fmt.Errorf("validate configs 1 to %d: %w", len(cs), err)
	}
	err = inParallel(ctx, validateWorkers, chunks-1, func(ctx context.Context, i int) error {
		lo, cs := chunk(i + 1)
		if err := ss.validateBatch(ctx, r, cs, reasons[lo:]); err != nil {
			return fmt.Errorf("validate configs %d to %d: %w", lo+1, lo+len(cs), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reasons, nil
}

// validateBatch asks about cs in one call and writes each one's reason into
// reasons (same order). The error is the call's, unwrapped, so that the
// caller can tell Unimplemented.
func (ss *session) validateBatch(ctx context.Context, r *rankProc, cs []space.Config, reasons []string) error {
	req := &pb.ValidateBatchRequest{
		Problem: sdk.ProblemToProto(ss.problem), World: int32(ss.job.World), Backend: ss.backend,
		Configs: make([]*pb.Config, len(cs)),
	}
	for i, c := range cs {
		req.Configs[i] = sdk.ConfigToProto(c)
	}
	cctx, cancel := context.WithTimeout(ctx, validateBatchDeadline(ss.job.Timeouts.Setup, len(cs)))
	defer cancel()
	resp, err := r.kernel.ValidateBatch(cctx, req)
	if err != nil {
		return err
	}
	if got := len(resp.GetResults()); got != len(cs) {
		return fmt.Errorf("plugin %s answered %d of %d configs", ss.spec.Path, got, len(cs))
	}
	for i, v := range resp.GetResults() {
		reasons[i] = rejection(v)
	}
	return nil
}

// validateEach asks about every config with one Validate call each,
// validateWorkers calls at a time, each under the setup timeout.
func (ss *session) validateEach(ctx context.Context, r *rankProc, cands []space.Config, reasons []string) error {
	job := ss.job
	return inParallel(ctx, validateWorkers, len(cands), func(ctx context.Context, i int) error {
		cctx, cancel := context.WithTimeout(ctx, job.Timeouts.Setup)
		defer cancel()
		v, err := r.kernel.Validate(cctx, &pb.ValidateRequest{
			Config: sdk.ConfigToProto(cands[i]), Problem: sdk.ProblemToProto(ss.problem),
			World: int32(job.World), Backend: ss.backend,
		})
		if err != nil {
			return fmt.Errorf("validate %s: %w", cands[i], err)
		}
		reasons[i] = rejection(v)
		return nil
	})
}

// rejection is why a Validate answer turns its config down, "" when it
// does not.
func rejection(v *pb.ValidateResponse) string {
	switch {
	case v.GetOk():
		return ""
	case v.GetReason() == "":
		return "rejected"
	default:
		return v.GetReason()
	}
}

// inParallel runs do(i) for i in [0, n), workers at a time, and returns the
// first error, after which no new i starts; ctx's error when it ends first.
func inParallel(ctx context.Context, workers, n int, do func(ctx context.Context, i int) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return parent.Err()
}
