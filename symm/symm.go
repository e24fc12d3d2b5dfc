// Package symm owns symmetric memory: a region of the same size on every
// rank of a group, which every rank can address directly, plus the signal
// pads ranks synchronize on. A Backend allocates a rank's region and exports
// a blob (a shared-memory file name, a CUDA IPC handle) that the host passes
// to every other rank, which maps it. Kernels receive a backend-specific Team
// (see symm/shm for the CPU backend, symm/cudamem for CUDA).
package symm

import (
	"context"

	"github.com/symmtune/symmtune/hardware"
)

// Backend is one kind of symmetric memory (cpu shared memory, cuda IPC).
type Backend interface {
	// Name is the --backend value that selects it: "cpu" or "cuda".
	Name() string
	// Hardware fingerprints the devices a group of world ranks runs on.
	Hardware(world int) (hardware.Fingerprint, error)
	// Allocate reserves rank's region of bytes and its signal pads, and
	// returns the blob peers need to map them. groupID is unique per group
	// of ranks, so concurrent searches never share names.
	Allocate(ctx context.Context, rank, world int, bytes int64, groupID string) (Pending, []byte, error)
}

// Pending is an allocated region waiting for its peers' blobs.
type Pending interface {
	// Connect maps every rank's region (blobs indexed by rank, this rank's
	// own included) and returns the team once all of them are reachable.
	Connect(ctx context.Context, blobs [][]byte) (Team, error)
	Close() error
}

// Team is one rank's view of a connected symmetric allocation.
type Team interface {
	Rank() int
	World() int
	Close() error
}
