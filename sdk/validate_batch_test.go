package sdk

import (
	"context"
	"errors"
	"testing"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
)

// pickyKernel turns down 8 blocks on a problem of fewer than 100 elements.
type pickyKernel struct{ sizedKernel }

func (pickyKernel) Validate(c space.Config, p space.Problem, _ int, _ string) error {
	if c["blocks"] == space.Int(8) && p.Shape["n"] < 100 {
		return errors.New("8 blocks need at least 100 elements")
	}
	return nil
}

// TestValidateBatchAnswersAsValidate: the batch gives each config, in
// order, exactly the answer Validate gives it alone.
func TestValidateBatchAnswersAsValidate(t *testing.T) {
	s := newServer(pickyKernel{}, []symm.Backend{namedBackend("cpu")})
	cfg := func(blocks int64) *pb.Config { return ConfigToProto(space.Config{"blocks": space.Int(blocks)}) }
	all := []*pb.Config{cfg(1), cfg(8), cfg(3), cfg(1)}
	cases := []struct {
		name    string
		n       int64
		backend string
		configs []*pb.Config
		wantOK  []bool
	}{
		{"small problem", 10, "cpu", all, []bool{true, false, false, true}},
		{"large problem", 1000, "cpu", all, []bool{true, true, false, true}},
		{"backend not served", 1000, "cuda", all, []bool{false, false, false, false}},
		{"no configs", 10, "cpu", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prob := ProblemToProto(space.Problem{Shape: space.Shape{"n": c.n}, Dtype: "f32"})
			got, err := s.ValidateBatch(context.Background(), &pb.ValidateBatchRequest{Configs: c.configs, Problem: prob, World: 2, Backend: c.backend})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.GetResults()) != len(c.configs) {
				t.Fatalf("%d answers for %d configs", len(got.GetResults()), len(c.configs))
			}
			for i, cf := range c.configs {
				one, err := s.Validate(context.Background(), &pb.ValidateRequest{Config: cf, Problem: prob, World: 2, Backend: c.backend})
				if err != nil {
					t.Fatal(err)
				}
				r := got.GetResults()[i]
				if r.GetOk() != c.wantOK[i] || r.GetOk() != one.GetOk() || r.GetReason() != one.GetReason() {
					t.Errorf("config %d: batch (%v, %q), alone (%v, %q), want ok %v", i, r.GetOk(), r.GetReason(), one.GetOk(), one.GetReason(), c.wantOK[i])
				}
				if !r.GetOk() && r.GetReason() == "" {
					t.Errorf("config %d: turned down without a reason", i)
				}
			}
		})
	}
}

// TestValidateBatchStopsWhenCancelled: a call whose deadline passed ends
// with its context's error rather than validating on.
func TestValidateBatchStopsWhenCancelled(t *testing.T) {
	s := newServer(pickyKernel{}, []symm.Backend{namedBackend("cpu")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.ValidateBatch(ctx, &pb.ValidateBatchRequest{
		Configs: []*pb.Config{ConfigToProto(space.Config{"blocks": space.Int(1)})},
		Problem: ProblemToProto(space.Problem{Shape: space.Shape{"n": 10}, Dtype: "f32"}), World: 2, Backend: "cpu",
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
