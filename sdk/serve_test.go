package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/hardware"
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
		{"a Defaulter that panics", defaulterKernel{sizedKernel{func(space.Problem) (space.Config, error) { panic("boom\nstack") }}}, 10, "", "default config panicked: boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(c.k, []symm.Backend{namedBackend("cpu")})
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

// namedBackend is a backend that only has a name: enough for the calls that
// check the backend and allocate nothing.
type namedBackend string

func (b namedBackend) Name() string { return string(b) }
func (namedBackend) Hardware(int) (hardware.Fingerprint, error) {
	return hardware.Fingerprint{}, errors.New("not for running")
}
func (namedBackend) Allocate(context.Context, int, int, int64, string) (symm.Pending, []byte, error) {
	return nil, nil, errors.New("not for running")
}

// TestServerRejectsABackendItWasNotGiven: Validate and DefaultFor turn
// down a backend Serve was not given before the kernel sees the request,
// so kernels need not check it themselves.
func TestServerRejectsABackendItWasNotGiven(t *testing.T) {
	s := newServer(sizedKernel{}, []symm.Backend{namedBackend("cpu")})
	prob := ProblemToProto(space.Problem{Shape: space.Shape{"n": 10}, Dtype: "f32"})
	cfg := ConfigToProto(space.Config{"blocks": space.Int(1)})
	const want = `plugin sized has no "cuda" backend (it has [cpu])`
	for _, backend := range []string{"cpu", "cuda", ""} {
		v, err := s.Validate(context.Background(), &pb.ValidateRequest{Config: cfg, Problem: prob, World: 2, Backend: backend})
		if err != nil {
			t.Fatalf("validate on %q: %v", backend, err)
		}
		if ok := backend == "cpu"; v.GetOk() != ok {
			t.Errorf("validate on %q: ok %v (%s), want %v", backend, v.GetOk(), v.GetReason(), ok)
		}
		if backend == "cuda" && v.GetReason() != want {
			t.Errorf("validate on cuda: reason %q, want %q", v.GetReason(), want)
		}
		_, err = s.DefaultFor(context.Background(), &pb.DefaultRequest{Problem: prob, World: 2, Backend: backend})
		if (err == nil) != (backend == "cpu") {
			t.Errorf("default on %q: error %v", backend, err)
		}
		if backend == "cuda" && (err == nil || err.Error() != want) {
			t.Errorf("default on cuda: error %v, want %q", err, want)
		}
	}
}

type teamA struct{ symm.Team }
type teamB struct{ symm.Team }

func TestTeamAs(t *testing.T) {
	a := &teamA{}
	got, err := TeamAs[*teamA](a)
	if err != nil || got != a {
		t.Fatalf("TeamAs[*teamA](a) = %v, %v; want a", got, err)
	}
	_, err = TeamAs[*teamB](a)
	if want := "the kernel needs a *sdk.teamB team, got *sdk.teamA"; err == nil || err.Error() != want {
		t.Errorf("TeamAs[*teamB](a): error %v, want %q", err, want)
	}
	if _, err := TeamAs[*teamA](nil); err == nil {
		t.Error("TeamAs of a nil team: no error")
	}
}

// gpuBackend is a namedBackend whose hardware is a GPU of compute
// capability 9.0.
type gpuBackend struct{ namedBackend }

func (gpuBackend) Hardware(int) (hardware.Fingerprint, error) {
	return hardware.Fingerprint{Kind: "gpu", Compute: "9.0", SMs: 132}, nil
}

// hardwareKernel picks 8 blocks on a GPU of compute capability 9.0, and
// 1 where DefaultFor answers without hardware.
type hardwareKernel struct{ sizedKernel }

func (hardwareKernel) DefaultFor(space.Problem, int, string) (space.Config, error) {
	return space.Config{"blocks": space.Int(1)}, nil
}

func (hardwareKernel) DefaultOn(_ space.Problem, _ int, _ string, hw hardware.Fingerprint) (space.Config, error) {
	if hw.Compute == "9.0" {
		return space.Config{"blocks": space.Int(8)}, nil
	}
	return space.Config{"blocks": space.Int(1)}, nil
}

// TestServerDefaultOnHardware: a HardwareDefaulter is given the backend's
// fingerprint; where the backend has none, DefaultFor answers.
func TestServerDefaultOnHardware(t *testing.T) {
	for _, c := range []struct {
		name    string
		backend symm.Backend
		want    string
	}{
		{"a GPU the backend fingerprints", gpuBackend{"cuda"}, "blocks=8"},
		{"no fingerprint: DefaultFor", namedBackend("cuda"), "blocks=1"},
	} {
		s := newServer(hardwareKernel{}, []symm.Backend{c.backend})
		resp, err := s.DefaultFor(context.Background(), &pb.DefaultRequest{
			Problem: ProblemToProto(space.Problem{Shape: space.Shape{"n": 10}, Dtype: "f32"}), World: 2, Backend: "cuda"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := ConfigFromProto(resp.GetConfig())
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != c.want {
			t.Errorf("%s: default %s, want %s", c.name, got, c.want)
		}
	}
}
