package tuner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// session is the live state of one search.
type session struct {
	s       *Searcher
	job     Job
	spec    launchSpec
	backend string
	problem space.Problem
	groupID string
	grp     *group
	out     *Outcome
	// slowest successful call per phase, for deadlines scaled to the work
	slowest map[string]time.Duration
	// iterUS is the slowest bench iteration (wall time of a successful
	// bench call over its warm-up and timed iterations) so far, µs.
	iterUS float64
	// callUS is the median call of the first config that ran (µs; 0 until
	// one has): what Job.Warm is counted in.
	callUS float64
	// strategy is the name of the strategy that runs the first pass.
	strategy string
	// slowStart and slowSetup are the slowest plugin process start-up and
	// group setup+connect measured so far; restarts are given at least
	// startupMargin times as long (startDeadline).
	slowStart, slowSetup time.Duration
	// transfer is the job's warm start (nil: none looked for).
	transfer *Transfer
}

// describe asks rank 0 what the kernel is, checks the job against it, and
// prunes the space with the kernel's Validate.
func (ss *session) describe(ctx context.Context, r *rankProc) ([]space.Config, error) {
	job := ss.job
	cctx, cancel := context.WithTimeout(ctx, job.Timeouts.Setup)
	defer cancel()
	d, err := r.kernel.Describe(cctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe plugin %s: %s", ss.spec.Path, grpcMessage(err))
	}
	desc, err := sdk.DescriptionFromProto(d)
	if err != nil {
		return nil, err
	}
	if desc.Name != job.Kernel {
		return nil, fmt.Errorf("plugin %s says it is %q, not %q", ss.spec.Path, desc.Name, job.Kernel)
	}
	if !slices.Contains(desc.Backends, ss.backend) {
		return nil, inputErrorf("kernel %s: plugin %s serves backends %v, not %s", job.Kernel, ss.spec.Path, desc.Backends, ss.backend)
	}
	shape, err := space.ParseShape(job.ShapeText, desc.Dims)
	if err != nil {
		return nil, &InputError{fmt.Errorf("kernel %s: %w", job.Kernel, err)}
	}
	if err := CheckDtype(job.Kernel, ss.backend, desc.Dtypes, job.Dtype); err != nil {
		return nil, err
	}
	hw, err := r.kernel.Hardware(cctx, &pb.HardwareRequest{Backend: ss.backend, World: int32(job.World)})
	if err != nil {
		return nil, inputErrorf("world size %d on the %s backend: %s", job.World, ss.backend, grpcMessage(err))
	}
	ss.problem = space.Problem{Shape: shape, Dtype: job.Dtype}
	if desc.Default, err = problemDefault(cctx, r, desc, ss.problem, job.World, ss.backend); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", ss.spec.Path, err)
	}
	ss.out.Desc, ss.out.Shape, ss.out.Hardware = desc, shape, sdk.HardwareFromProto(hw)
	ss.out.SpaceSize = desc.Space.Size()
	where, err := parseWhere(job.Where, desc.Space, desc.Default)
	if err != nil {
		return nil, inputErrorf("kernel %s: --where: %v", job.Kernel, err)
	}
	valid, defaultReason, err := ss.listValid(ctx, r, desc, where)
	if err != nil {
		return nil, err
	}
	ss.out.ValidCount = len(valid)
	if len(valid) == 0 {
		return nil, inputErrorf("kernel %s: no config can run shape %s, %s, world %d (the default config: %s)",
			job.Kernel, shape.Format(desc.Dims...), job.Dtype, job.World, defaultReason)
	}
	if defaultReason != "" {
		ss.s.Logger.Warn("default config cannot run this problem", "kernel", job.Kernel, "reason", defaultReason)
	}
	return valid, nil
}

func grpcMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "desc = "); i >= 0 {
		return msg[i+len("desc = "):]
	}
	return msg
}

// restart replaces the group with a fresh one; first, when non-nil, is an
// already running rank 0.
func (ss *session) restart(ctx context.Context, first *rankProc) error {
	if ss.grp != nil {
		ss.grp.kill()
		ss.grp = nil
	}
	spec := ss.spec
	spec.Start = startDeadline(ss.job.Timeouts.Setup, ss.slowStart)
	var err error
	if first == nil {
		if first, err = launch(spec, 0); err != nil {
			return err
		}
	}
	ss.groupID = newGroupID()
	ss.grp, err = startGroup(ctx, spec, first, ss.job.World, ss.backend, ss.problem, ss.groupID,
		startDeadline(ss.job.Timeouts.Setup, ss.slowSetup))
	if err != nil {
		return err
	}
	if ss.out.Startup.Ranks == nil {
		for _, r := range ss.grp.ranks {
			ss.out.Startup.Ranks = append(ss.out.Startup.Ranks, r.startup)
		}
		ss.out.Startup.Setup = ss.grp.setupTook
	}
	for _, r := range ss.grp.ranks {
		ss.slowStart = max(ss.slowStart, r.startup)
	}
	ss.slowSetup = max(ss.slowSetup, ss.grp.setupTook)
	return nil
}

// startupMargin is how many times the slowest start-up measured so far a
// group (re)start may take before it counts as failed.
const startupMargin = 3

// startDeadline bounds a plugin process's start-up, or a group's setup and
// connect: the job's setup timeout, raised to startupMargin times the
// slowest measured so far. Start-up can be seconds (a Python plugin that
// imports torch), and a group restarted after a hang starts all its ranks
// at once while the killed ones are still being torn down; a start that
// merely takes as long as the first one did must not fail the search.
func startDeadline(setup, measured time.Duration) time.Duration {
	return max(setup, startupMargin*measured)
}

// restartAttempts is how many times a group that must be replaced after a
// hang or crash is started before the search gives up: right after a
// SIGKILL the driver may still be releasing the dead processes' GPU memory
// and IPC handles, and a start that fails then succeeds a moment later.
const restartAttempts = 3

// restartRetrying replaces the group, retrying a failed start after a
// growing pause (restartAttempts in all).
func (ss *session) restartRetrying(ctx context.Context) error {
	var err error
	for attempt := 1; ; attempt++ {
		var ie *InputError
		if err = ss.restart(ctx, nil); err == nil || attempt == restartAttempts || ctx.Err() != nil || errors.As(err, &ie) {
			return err
		}
		pause := time.Duration(attempt) * 500 * time.Millisecond
		ss.s.Logger.Warn("ranks did not start; trying again", "attempt", attempt, "pause", pause, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// newGroupID names a group's shared resources. It starts with the host's
// PID so that a later search can tell files of a dead host (one killed with
// SIGKILL while its ranks were still mapping them) from a live one's.
func newGroupID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// precompile lets rank 0 build every valid config ahead of timing (GPU
// plugins compile in parallel on all cores). Failures are not fatal here:
// the config's own Prepare reports them as that trial's failure.
func (ss *session) precompile(ctx context.Context, valid []space.Config) {
	req := &pb.PrecompileRequest{}
	for _, c := range valid {
		req.Configs = append(req.Configs, sdk.ConfigToProto(c))
	}
	cctx, cancel := context.WithTimeout(ctx, ss.job.Timeouts.Prepare*time.Duration(max(1, len(valid)/8)))
	defer cancel()
	if _, err := ss.grp.ranks[0].kernel.Precompile(cctx, req); err != nil {
		ss.s.Logger.Warn("precompile failed; configs compile at their trials", "err", err)
	}
}

// deadline is the phase's configured ceiling, tightened to 20 times the
// slowest successful call so far plus slack, so a deadlock costs seconds.
// Bench deadlines scale per iteration instead (benchDeadline).
func (ss *session) deadline(phase string, ceiling time.Duration) time.Duration {
	if d, ok := ss.slowest[phase]; ok {
		return min(ceiling, 20*d+5*time.Second)
	}
	return ceiling
}
