//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/symmtune/symmtune/cuda/cu"

	"github.com/symmtune/symmtune/cuda/cublaslt"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm/cudamem"
)

// parse checks a config where it runs, as the host's Validate did.
func (in *instance) parse(c space.Config) (Config, error) {
	cfg, err := ParseConfig(in.k.Name, c)
	if err != nil {
		return Config{}, err
	}
	if err := Validate(in.k.Name, cfg, in.prob); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", c, err)
	}
	return cfg, nil
}

func (in *instance) smTarget(c Config) int {
	if c.SMReserve == 0 {
		return 0
	}
	return in.team.SMs() - c.SMReserve
}

// plan returns the cuBLASLt plan of step s's product: rows rows, batched
// over s.Batch ranks' rows (M/W rows apart in A and D), B stored [N, K] as
// the fused GEMM and a torch.nn.Linear weight hold it (so symmtune.torch
// runs the tuned algorithm on such a B as it is). Call inside Do.
func (in *instance) plan(s Step, c Config) (*cublaslt.Plan, error) {
	key := planKey{s.Rows, s.Batch, in.smTarget(c)}
	if p := in.plans[key]; p != nil {
		return p, nil
	}
	rows := int64(in.prob.Rows())
	p, err := in.lt.Plan(cublaslt.Matmul{M: s.Rows, N: in.prob.N, K: in.prob.K, DType: in.dtype, BT: true,
		Batch: s.Batch, StrideA: rows * int64(in.prob.K), StrideD: rows * int64(in.prob.N),
		SMCountTarget: key.smTarget, Workspace: workspaceBytes})
	if err != nil {
		return nil, err
	}
	in.plans[key] = p
	return p, nil
}

// product enqueues D[rows, N] = A[rows, K]·B on step's stream (batched
// when the step is).
func (in *instance) product(c Config, s Step, a, d cu.DevicePtr) error {
	p, err := in.plan(s, c)
	if err != nil {
		return err
	}
	end, err := in.trace.span(fmt.Sprintf("product rows %d+%d of rank %d (batch %d)", s.Start, s.Rows, s.Owner, s.Batch), fmt.Sprintf("gemm%d", s.Stream), in.gemm[s.Stream])
	if err != nil {
		return err
	}
	if err := p.Run(in.gemm[s.Stream], c.Algo, a, in.bT, d, in.ws[s.Stream]); err != nil {
		return err
	}
	return end()
}

// prepare makes c's cuBLASLt plans and checks that its algorithm index
// exists for every product shape. Call inside Do.
func (in *instance) prepare(c Config) error {
	if c.SMReserve >= in.team.SMs() {
		return fmt.Errorf("sm_reserve %d leaves none of the %d SMs for the products", c.SMReserve, in.team.SMs())
	}
	if c.Impl == ImplFused {
		if _, err := in.fusedFor(c); err != nil {
			return err
		}
	}
	for _, s := range in.pipe.products(c) {
		p, err := in.plan(s, c)
		if err != nil {
			return err
		}
		if c.Algo >= p.Algos() {
			return fmt.Errorf("algo %d: cuBLASLt ranks only %d algorithms for %s", c.Algo, p.Algos(), p.Matmul)
		}
	}
	if c.Graph && in.graphs[c] == nil {
		g, err := cudamem.Capture(in.main, func() error { return in.pipe.launch(c) })
		if err != nil {
			return fmt.Errorf("capture the call in a CUDA graph: %w", err)
		}
		in.graphs[c] = g
	}
	return nil
}

// call enqueues one call of c: a replay of its graph (captured by
// prepare), or the launch sequence itself.
func (in *instance) call(c Config) error {
	if g := in.graphs[c]; c.Graph && in.trace == nil && g != nil {
		return g.Launch(in.main)
	}
	return in.pipe.launch(c)
}

func (in *instance) Prepare(ctx context.Context, c space.Config) error {
	cfg, err := in.parse(c)
	if err != nil {
		return err
	}
	return in.team.Do(func() error { return in.prepare(cfg) })
}

// begin starts a call of c: announce enqueued on main (nil: nothing to
// announce), then every stream c uses forked from main.
func (in *instance) begin(c Config, announce func() error) error {
	if announce != nil {
		if err := announce(); err != nil {
			return err
		}
	}
	if err := in.fork.Record(in.main); err != nil {
		return fmt.Errorf("record fork: %w", err)
	}
	for _, s := range in.streams(&c) {
		if err := s.Wait(in.fork, 0); err != nil {
			return fmt.Errorf("fork wait: %w", err)
		}
	}
	return nil
}

// signal enqueues on s the setting of flag i in rank q's region (see
// layout.go), after everything s wrote before.
func (in *instance) signal(s cu.Stream, q, i int) error {
	if err := cudamem.WriteFlag(s, in.flag(q, i), 1); err != nil {
		return fmt.Errorf("set flag %d of rank %d: %w", i, q, err)
	}
	return nil
}

// consume makes s wait for this rank's flag i and clears it for the next
// call: each flag has one consumer.
func (in *instance) consume(s cu.Stream, i int) error {
	me := in.team.Rank()
	if err := cudamem.WaitFlag(s, in.flag(me, i), 1); err != nil {
		return fmt.Errorf("wait for flag %d: %w", i, err)
	}
	if err := cudamem.WriteFlag(s, in.flag(me, i), 0); err != nil {
		return fmt.Errorf("clear flag %d: %w", i, err)
	}
	return nil
}

// clearFlags enqueues on s the clearing of this rank's flags: on main
// before a trial, which starts from clear flags whatever an earlier, failed
// one left (the caller's barrier must follow before any peer may set one);
// and on the fused GEMM's stream after it, every flag of the region having
// been set this call by then (the GEMM waited for each chunk's, and for
// every peer's start flag before its first wait for that peer's data; a
// pull's ReadyFlag is consumed before its chunk is flagged), while the
// call's end barrier keeps the next call's sets after the clear.
func (in *instance) clearFlags(s cu.Stream) error {
	if err := cu.MemsetD8Async(in.team.Data(in.team.Rank()), 0, PayloadOffset, s); err != nil {
		return fmt.Errorf("clear flags: %w", err)
	}
	return nil
}

// streams lists the streams besides main that c uses (all of them for
// nil): c.Streams product streams, the per-peer streams, and matmulrs's
// reduction stream. Forking and joining only those keeps the host's
// per-call work, which the call's time includes, small.
func (in *instance) streams(c *Config) []cu.Stream {
	n := maxStreams
	if c != nil {
		n = c.Streams
	}
	out := append([]cu.Stream{}, in.gemm[:n]...)
	out = append(out, in.side...)
	if c == nil || in.k.Name == MatmulRS {
		out = append(out, in.reduce)
	}
	return out
}

// end joins every stream into main and closes the call with the team
// barrier: no rank starts its next call (and overwrites what a peer still
// reads) before every rank has finished this one.
func (in *instance) end(c Config) error {
	for i, s := range in.streams(&c) {
		if err := in.joins[i].Record(s); err != nil {
			return fmt.Errorf("record join: %w", err)
		}
		if err := in.main.Wait(in.joins[i], 0); err != nil {
			return fmt.Errorf("join wait: %w", err)
		}
	}
	end, err := in.trace.span("end barrier", "main", in.main)
	if err != nil {
		return err
	}
	if err := in.team.Barrier(in.main); err != nil {
		return err
	}
	return end()
}

// peerIndex is q's place in the peer order (next rank first), which
// indexes the side streams.
func (in *instance) peerIndex(q int) int {
	w := in.team.World()
	return (q - in.team.Rank() - 1 + w) % w
}

// flag is the address of flag i in rank q's region.
func (in *instance) flag(q, i int) cu.DevicePtr {
	return in.team.Data(q) + cu.DevicePtr(i*FlagStride)
}

// payload is rank q's payload as mapped here.
func (in *instance) payload(q int) cu.DevicePtr {
	return in.team.Data(q) + PayloadOffset
}
