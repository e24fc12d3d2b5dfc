package sdk

import (
	"fmt"

	"github.com/symmtune/symmtune/symm"
)

// TeamAs returns team as the backend's concrete team type T (*shm.Team,
// *cudamem.Team), for a kernel's Open. Serve only opens a kernel on the
// backends it was given, so a mismatch means the plugin's main serves the
// kernel on a backend it was not written for.
func TeamAs[T symm.Team](team symm.Team) (T, error) {
	t, ok := team.(T)
	if !ok {
		return t, fmt.Errorf("the kernel needs a %T team, got %T", t, team)
	}
	return t, nil
}
