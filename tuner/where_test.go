package tuner

import (
	"testing"

	"github.com/symmtune/symmtune/space"
)

func TestWhere(t *testing.T) {
	sp := space.Space{Params: []space.Param{
		{Name: "algo", Values: []space.Value{space.Str("a"), space.Str("b")}},
		{Name: "blocks", Values: []space.Value{space.Int(1), space.Int(2)}},
	}}
	def := space.Config{"algo": space.Str("a"), "blocks": space.Int(1)}
	for _, c := range []struct {
		text    string
		wantErr bool
		match   []string // configs (String form) that must match; the rest must not
	}{
		{"", false, []string{"algo=a,blocks=1", "algo=a,blocks=2", "algo=b,blocks=1", "algo=b,blocks=2"}},
		{"blocks=2", false, []string{"algo=a,blocks=2", "algo=b,blocks=2"}},
		{"algo=b,blocks=1", false, []string{"algo=b,blocks=1"}},
		{"blocks=3", true, nil},
		{"threads=1", true, nil},
		{"algo", true, nil},
	} {
		where, err := parseWhere(c.text, sp, def)
		if (err != nil) != c.wantErr {
			t.Errorf("parseWhere(%q) error %v, want error %v", c.text, err, c.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		want := map[string]bool{}
		for _, m := range c.match {
			want[m] = true
		}
		for _, cfg := range sp.Enumerate() {
			if got := matches(cfg, where); got != want[cfg.String()] {
				t.Errorf("where %q: matches(%s) = %v", c.text, cfg, got)
			}
		}
	}
}
