package strategy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/space"
)

// TestConfigKeyIsKey: configKey renders what space.Config.Key does.
func TestConfigKeyIsKey(t *testing.T) {
	many := space.Config{}
	for i := range 40 {
		many[fmt.Sprintf("p%02d", 39-i)] = space.Int(int64(i * 1000003))
	}
	configs := []space.Config{
		{},
		{"a": space.Int(0)},
		{"block_m": space.Int(128), "alg": space.Str("ring"), "split_k": space.Int(-4), "b": space.Int(-9223372036854775808)},
		{"x": space.Str(""), "y": space.Str(strings.Repeat("v", 300)), "Z": space.Int(9223372036854775807)},
		many,
	}
	for _, c := range configs {
		if got, want := configKey(c), c.Key(); got != want {
			t.Errorf("configKey = %q, want %q", got, want)
		}
	}
}
