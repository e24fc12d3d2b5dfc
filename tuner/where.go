package tuner

import (
	"strings"

	"github.com/symmtune/symmtune/space"
)

// parseWhere reads a Job's Where ("name=value,...") against the kernel's
// space: the parameters a search is restricted to. Empty means no
// restriction.
func parseWhere(text string, s space.Space, def space.Config) (space.Config, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	full, err := space.ParseConfig(text, s, def)
	if err != nil {
		return nil, err
	}
	where := space.Config{}
	for _, part := range strings.Split(text, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
		where[name] = full[name]
	}
	return where, nil
}

// matches reports whether c has every value where fixes.
func matches(c, where space.Config) bool {
	for name, v := range where {
		if c[name] != v {
			return false
		}
	}
	return true
}
