package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"

	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/symm"
)

// sizedKernel is a kernel whose space is one parameter; with pick set it
// is also a Defaulter.
type sizedKernel struct {
	pick func(p space.Problem) (space.Config, error)
}

func (sizedKernel) Describe() Description {
	return Description{Name: "sized", Dims: []string{"n"}, Dtypes: []string{"f32"},
		Space:   space.Space{Params: []space.Param{{Name: "blocks", Values: []space.Value{space.Int(1), space.Int(8)}}}},
		Default: space.Config{"blocks": space.Int(1)}}
}
func (sizedKernel) Validate(space.Config, space.Problem, int, string) error { return nil }
func (sizedKernel) SymmetricBytes(space.Problem, int, string) (int64, error) {
	return 0, nil
}
func (sizedKernel) Open(context.Context, symm.Team, space.Problem) (Instance, error) {
	return nil, errors.New("not for running")
}

type defaulterKernel struct{ sizedKernel }

func (k defaulterKernel) DefaultFor(p space.Problem, _ int, _ string) (space.Config, error) {
	return k.pick(p)
}

func TestServerDefaultFor(t *testing.T) {
	big := func(p space.Problem) (space.Config, error) {
		if p.Shape["n"] > 1000 {
			return space.Config{"blocks": space.Int(8)}, nil
		}
		return space.Config{"blocks": space.Int(1)}, nil
	}
	outside := func(space.Problem) (space.Config, error) { return space.Config{"blocks": space.Int(3)}, nil }
	for _, c := range []struct {
		name    string
		k       Kernel
		n       int64
		want    string
		wantErr string
	}{
		{"describe's default without a Defaulter", sizedKernel{}, 5000, "blocks=1", ""},
		{"small problem", defaulterKernel{sizedKernel{big}}, 10, "blocks=1", ""},
		{"large problem", defaulterKernel{sizedKernel{big}}, 5000, "blocks=8", ""},
		{"a default outside the space", defaulterKernel{sizedKernel{outside}}, 10, "", "outside the space"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(c.k, nil)
			resp, err := s.DefaultFor(context.Background(), &pb.DefaultRequest{
				Problem: ProblemToProto(space.Problem{Shape: space.Shape{"n": c.n}, Dtype: "f32"}), World: 2, Backend: "cpu"})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := ConfigFromProto(resp.GetConfig())
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want {
				t.Errorf("default %s, want %s", got, c.want)
			}
		})
	}
}
