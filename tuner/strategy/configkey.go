package strategy

import (
	"slices"
	"strconv"

	"github.com/symmtune/symmtune/space"
)

// configKey is c.Key(): "name=value" pairs sorted by name, joined by
// commas. It builds the same string without collecting the names through
// an iterator or rendering each value into a string of its own: keys are
// asked for every valid config each time a replay or a strategy starts and
// for every proposal, and space.Config.String's allocations were a sixth
// of a replay's CPU. A config's names are distinct, so any sort gives the
// same order.
func configKey(c space.Config) space.ConfigKey {
	var nameBuf [16]string
	names := nameBuf[:0]
	for n := range c {
		names = append(names, n)
	}
	slices.Sort(names)
	var textBuf [256]byte
	b := textBuf[:0]
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
		b = append(b, '=')
		if v := c[n]; v.IsStr {
			b = append(b, v.Str...)
		} else {
			b = strconv.AppendInt(b, v.Int, 10)
		}
	}
	return space.ConfigKey(b)
}
