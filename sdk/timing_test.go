package sdk

import (
	"context"
	"strings"
	"testing"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/space"
)

// timingInstance records the timing each Bench was asked for.
type timingInstance struct{ asked []Timing }

func (*timingInstance) Prepare(context.Context, space.Config) error { return nil }
func (*timingInstance) Verify(context.Context, space.Config, uint64) (VerifyResult, error) {
	return VerifyResult{OK: true}, nil
}
func (i *timingInstance) Bench(ctx context.Context, _ space.Config, _, iters int) ([]float64, error) {
	i.asked = append(i.asked, TimingOf(ctx))
	return make([]float64, iters), nil
}
func (*timingInstance) Close() error { return nil }

// TestServerBenchTiming: the server hands the instance's Bench the timing
// the host asked for (BenchRequest.timing) and refuses one it does not
// know before the instance runs anything.
func TestServerBenchTiming(t *testing.T) {
	inst := &timingInstance{}
	s := newServer(sizedKernel{}, nil)
	s.instance = inst
	cfg := ConfigToProto(space.Config{"blocks": space.Int(1)})
	for _, c := range []struct {
		timing  string
		want    Timing
		wantErr string
	}{
		{"", TimingOwn, ""},
		{"loaded", TimingLoaded, ""},
		{"Loaded", "", `timing "Loaded"`},
		{"stream", "", `timing "stream"`},
	} {
		before := len(inst.asked)
		_, err := s.Bench(context.Background(), &pb.BenchRequest{Config: cfg, Warmup: 1, Iters: 2, Timing: c.timing})
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("timing %q: error %v, want one naming %s", c.timing, err, c.wantErr)
			}
			if len(inst.asked) != before {
				t.Errorf("timing %q: the instance ran", c.timing)
			}
		case err != nil:
			t.Errorf("timing %q: %v", c.timing, err)
		case len(inst.asked) != before+1 || inst.asked[before] != c.want:
			t.Errorf("timing %q: the instance was asked %q, want %q", c.timing, inst.asked[before:], c.want)
		}
	}
}
