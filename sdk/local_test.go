package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
	"github.com/symmtune/symmtune/symm/shm"
)

// rankCopy is a toy kernel: each rank writes its rank into its region and
// checks, after a barrier, that every peer's region holds the peer's rank.
// failOn makes that rank's Verify fail before the barrier; lie makes every
// rank report a wrong answer.
type rankCopy struct {
	failOn int
	lie    bool
}

func (k rankCopy) Describe() sdk.Description {
	return sdk.Description{Name: "rankcopy", Dims: []string{"n"}, Dtypes: []string{"f32"},
		Space:   space.Space{Params: []space.Param{{Name: "x", Values: []space.Value{space.Int(1), space.Int(2)}}}},
		Default: space.Config{"x": space.Int(1)}}
}

func (rankCopy) Validate(c space.Config, _ space.Problem, _ int, _ string) error {
	if c["x"].Int == 2 {
		return errors.New("x=2 never runs")
	}
	return nil
}

func (rankCopy) SymmetricBytes(space.Problem, int, string) (int64, error) { return 8, nil }

func (k rankCopy) Open(_ context.Context, team symm.Team, _ space.Problem) (sdk.Instance, error) {
	t, err := sdk.TeamAs[*shm.Team](team)
	return &rankCopyInstance{k, t}, err
}

type rankCopyInstance struct {
	k rankCopy
	t *shm.Team
}

func (in *rankCopyInstance) Prepare(context.Context, space.Config) error { return nil }
func (in *rankCopyInstance) Close() error                                { return nil }
func (in *rankCopyInstance) Bench(context.Context, space.Config, int, int) ([]float64, error) {
	return nil, nil
}

func (in *rankCopyInstance) Verify(ctx context.Context, _ space.Config, _ uint64) (sdk.VerifyResult, error) {
	if in.t.Rank() == in.k.failOn {
		return sdk.VerifyResult{}, errors.New("boom")
	}
	in.t.Local()[0] = byte(in.t.Rank() + 1)
	if err := in.t.Barrier(ctx); err != nil {
		return sdk.VerifyResult{}, err
	}
	for r := range in.t.World() {
		if in.t.Data(r)[0] != byte(r+1) || in.k.lie {
			return sdk.VerifyResult{Detail: "peer mismatch"}, nil
		}
	}
	return sdk.VerifyResult{OK: true}, nil
}

func TestVerifyLocal(t *testing.T) {
	ctx := context.Background()
	p := space.Problem{Shape: space.Shape{"n": 1}, Dtype: "f32"}
	ok := space.Config{"x": space.Int(1)}
	res, err := sdk.VerifyLocal(ctx, rankCopy{failOn: -1}, shm.Backend{}, 3, p, ok, 1)
	if err != nil || len(res) != 3 || !res[0].OK || !res[1].OK || !res[2].OK {
		t.Fatalf("a right kernel: %v %+v", err, res)
	}
	res, err = sdk.VerifyLocal(ctx, rankCopy{failOn: -1, lie: true}, shm.Backend{}, 2, p, ok, 1)
	if err != nil || res[0].OK || res[1].Detail != "peer mismatch" {
		t.Errorf("a wrong answer is a verdict, not an error: %v %+v", err, res)
	}
	// The failing rank's peers wait in a barrier it never reaches: they
	// are cancelled, and the error names the rank.
	if _, err = sdk.VerifyLocal(ctx, rankCopy{failOn: 1}, shm.Backend{}, 3, p, ok, 1); err == nil || !strings.Contains(err.Error(), "rank 1: boom") {
		t.Errorf("a failing rank: %v", err)
	}
	if _, err = sdk.VerifyLocal(ctx, rankCopy{failOn: -1}, shm.Backend{}, 2, p, space.Config{"x": space.Int(2)}, 1); err == nil || !strings.Contains(err.Error(), "x=2 never runs") {
		t.Errorf("a config Validate rejects: %v", err)
	}
	if _, err = sdk.VerifyLocal(ctx, rankCopy{failOn: -1}, shm.Backend{}, 2, p, space.Config{"x": space.Int(3)}, 1); err == nil {
		t.Error("a config outside the space ran")
	}
}
