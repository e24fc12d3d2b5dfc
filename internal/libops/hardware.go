package libops

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/symmtune/symmtune/hardware"
)

// hardwareOps serve hardware fingerprints from package hardware (the ID)
// and the backends' fingerprinting (hardware.CPU, and symm/cudamem's for
// GPUs in a library built with -tags cuda): the one implementation the
// cache keys carry.
func hardwareOps() map[string]op {
	return map[string]op{
		"hardware.id": handler("the cache-key ID of {fingerprint}: {id, id_without_driver}",
			func(r struct {
				Fingerprint json.RawMessage `json:"fingerprint"`
			}) (any, error) {
				f, err := decodeFingerprint(r.Fingerprint)
				if err != nil {
					return nil, err
				}
				return map[string]string{"id": f.ID(), "id_without_driver": f.WithoutDriver().ID()}, nil
			}),
		"hardware.fingerprint": handler("this machine's fingerprint for {backend: cpu or cuda, world} (cuda: GPUs 0..world-1): {fingerprint, id} or {error}",
			func(r struct {
				Backend string `json:"backend"`
				World   int    `json:"world"`
			}) (any, error) {
				f, err := machineFingerprint(r.Backend, r.World)
				if err != nil {
					if _, ok := err.(*BadInputError); ok {
						return nil, err
					}
					return failure("hardware", err.Error()), nil
				}
				return map[string]any{"fingerprint": f, "id": f.ID()}, nil
			}),
	}
}

// decodeFingerprint reads a fingerprint object strictly: an unknown field
// is bad input naming it.
func decodeFingerprint(b json.RawMessage) (hardware.Fingerprint, error) {
	var f hardware.Fingerprint
	if len(b) == 0 || string(b) == "null" {
		return f, bad("fingerprint: missing")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, bad("fingerprint: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return f, nil
}

// fingerprints keeps each backend's and world's fingerprint once taken:
// the hardware does not change under a running process, and a GPU's costs
// driver calls.
var fingerprints sync.Map // fingerprintKey → hardware.Fingerprint

type fingerprintKey struct {
	backend string
	world   int
}

// machineFingerprint is the fingerprint a search on backend with world
// ranks records: the CPU's, or GPUs 0..world-1's (CUDA loaded on first
// use). An unknown backend or a world < 1 is bad input; any other error
// says why the machine cannot be fingerprinted.
func machineFingerprint(backend string, world int) (hardware.Fingerprint, error) {
	if world < 1 {
		return hardware.Fingerprint{}, bad("world %d: want at least 1", world)
	}
	k := fingerprintKey{backend, world}
	if f, ok := fingerprints.Load(k); ok {
		return f.(hardware.Fingerprint), nil
	}
	var f hardware.Fingerprint
	var err error
	switch backend {
	case "cpu":
		f = hardware.CPU()
	case "cuda":
		f, err = gpuFingerprint(world)
	default:
		return f, bad("backend %q: want cpu or cuda", backend)
	}
	if err != nil {
		return f, err
	}
	fingerprints.Store(k, f)
	return f, nil
}
