package allreduce

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/symmtune/symmtune/space"
)

// defaultsJSON is the CUDA build's untuned default by message size.
//
//go:embed kernels/defaults.json
var defaultsJSON []byte

type defaultRules struct {
	Algorithm string `json:"algorithm"`
	Rules     []struct {
		MaxBytes int64 `json:"max_bytes"`
		// MaxWorld: the rule applies up to this many ranks (0: any).
		MaxWorld int `json:"max_world"`
		// Algorithm overrides the file's for this rule.
		Algorithm               string `json:"algorithm"`
		Blocks, Threads, Unroll int64
	} `json:"rules"`
	BlockLadder []int64 `json:"block_ladder"`
}

var rules = func() defaultRules {
	var r defaultRules
	if err := json.Unmarshal(defaultsJSON, &r); err != nil || len(r.Rules) == 0 {
		panic(fmt.Sprintf("kernels/defaults.json: %v", err)) // embedded at build time
	}
	return r
}()

// Padded is n elements padded with zeros to whole 16-byte vectors on every
// rank: what the CUDA kernels run on (any n, split evenly over the ranks).
// elt is the element size in bytes (2 or 4).
func Padded(n int64, elt, world int) int64 {
	unit := int64(world) * int64(16/elt)
	return (n + unit - 1) / unit * unit
}

// workVectors is the 16-byte vectors a config's blocks share for n
// elements of elt bytes on world ranks (Validate and Default count blocks
// with work by it): a rank's share of the padded message for the
// two-shots, the whole of it for one_shot, and a Lamport algorithm's slot,
// which it walks unpadded (the message, or one rank's chunk of it).
func workVectors(algo string, n int64, elt, world int) int64 {
	if l, ok := lamportOf(algo); ok {
		return l.slotVectors(n, elt, world)
	}
	nvec := Padded(n, elt, world) * int64(elt) / 16
	if algo == OneShot {
		return nvec
	}
	return nvec / int64(world)
}

// Default is the config an untuned caller should run for n elements of elt
// bytes on world ranks: the first rule whose max_bytes covers the message
// and whose max_world the ranks, its blocks shrunk down the ladder until
// every block has work (workVectors, as Validate counts).
func Default(n int64, elt, world int) space.Config {
	bytes := n * int64(elt)
	r := rules.Rules[len(rules.Rules)-1]
	for _, x := range rules.Rules {
		if (x.MaxBytes == 0 || bytes <= x.MaxBytes) && (x.MaxWorld == 0 || world <= x.MaxWorld) {
			r = x
			break
		}
	}
	algo := rules.Algorithm
	if r.Algorithm != "" {
		algo = r.Algorithm
	}
	work := workVectors(algo, n, elt, world)
	blocks := r.Blocks
	for _, b := range rules.BlockLadder {
		if b <= blocks && (b == 1 || (b-1)*r.Threads*r.Unroll < work) {
			blocks = b
			break
		}
	}
	return space.Config{
		"algorithm": space.Str(algo), "blocks": space.Int(blocks),
		"threads": space.Int(r.Threads), "unroll": space.Int(r.Unroll), "stages": space.Int(1),
	}
}
