package shm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// connectTeam allocates and connects world ranks inside this process (each
// maps every region, as separate processes would).
func connectTeam(t *testing.T, world int, bytes int64) []*Team {
	t.Helper()
	group := fmt.Sprintf("test%d-%d", os.Getpid(), time.Now().UnixNano())
	blobs := make([][]byte, world)
	pendings := make([]*pending, world)
	for r := 0; r < world; r++ {
		p, blob, err := Backend{}.Allocate(context.Background(), r, world, bytes, group)
		if err != nil {
			t.Fatal(err)
		}
		pendings[r], blobs[r] = p.(*pending), blob
	}
	teams := make([]*Team, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			tm, err := pendings[r].Connect(ctx, blobs)
			if err == nil {
				teams[r] = tm.(*Team)
			}
			errs[r] = err
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d connect: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, tm := range teams {
			tm.Close()
		}
	})
	return teams
}

func TestConnectSharesRegionsAndUnlinksFiles(t *testing.T) {
	teams := connectTeam(t, 3, 64)
	for r, tm := range teams {
		tm.Local()[0] = byte(10 + r)
	}
	for _, tm := range teams {
		for r := 0; r < 3; r++ {
			if got := tm.Data(r)[0]; got != byte(10+r) {
				t.Errorf("rank %d sees %d in rank %d's region, want %d", tm.Rank(), got, r, 10+r)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(Dir(), FilePrefix+"test*"))
	if len(left) > 0 {
		t.Errorf("files left after connect: %v", left)
	}
}

// TestBarrierOrdersPhases checks that no rank starts phase k+1 before every
// rank finished phase k, over many back-to-back barriers.
func TestBarrierOrdersPhases(t *testing.T) {
	const world, phases = 4, 200
	teams := connectTeam(t, world, 8)
	var done [phases]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, world)
	for _, tm := range teams {
		wg.Add(1)
		go func(tm *Team) {
			defer wg.Done()
			for k := 0; k < phases; k++ {
				if k > 0 && done[k-1].Load() != world {
					errs <- fmt.Errorf("rank %d entered phase %d while phase %d had %d/%d ranks done", tm.Rank(), k, k-1, done[k-1].Load(), world)
					return
				}
				done[k].Add(1)
				if err := tm.Barrier(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		}(tm)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBarrierGivesUpWithContext(t *testing.T) {
	teams := connectTeam(t, 2, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// Rank 1 never arrives: rank 0 must return, not hang.
	if err := teams[0].Barrier(ctx); err == nil {
		t.Fatal("barrier returned without its peer")
	}
}

func TestWaitUntilSeesStoreFromPeer(t *testing.T) {
	teams := connectTeam(t, 2, 64)
	flag := Uint32(teams[1].Data(0), 16) // rank 1's view of rank 0's word
	done := make(chan struct{})
	defer func() { <-done }() // the writer must finish before the cleanup unmaps
	go func() {
		defer close(done)
		time.Sleep(20 * time.Millisecond)
		Store(Uint32(teams[0].Local(), 16), 7)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := WaitUntil(ctx, flag, func(v uint32) bool { return v == 7 }); err != nil {
		t.Fatal(err)
	}
}

func TestAllocateRejects(t *testing.T) {
	for _, tc := range []struct {
		rank, world int
		bytes       int64
		group       string
	}{{2, 2, 8, "g"}, {0, 0, 8, "g"}, {0, 2, -1, "g"}, {0, 2, 8, "../x"}, {0, 2, 8, ""}} {
		if p, _, err := (Backend{}).Allocate(context.Background(), tc.rank, tc.world, tc.bytes, tc.group); err == nil {
			p.Close()
			t.Errorf("Allocate(%+v) accepted", tc)
		}
	}
}

// TestAllocateChecksFreeSpace: a group whose regions cannot fit in the
// shared-memory directory is refused at Allocate, naming the shortfall,
// and leaves no file behind; one that fits gets its pages reserved.
func TestAllocateChecksFreeSpace(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs(Dir(), &st); err != nil {
		t.Skip(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	for _, tc := range []struct {
		name  string
		world int
		bytes int64
		want  []string // in the error; nil: it must fit
	}{
		{"fits", 2, 1 << 16, nil},
		{"one rank too big", 1, free + 1<<30, []string{"1 rank needs", "free:", "short"}},
		{"the group too big", 4, free/3 + 1<<20, []string{"4 ranks need", "short"}},
		{"overflows", 8, 1 << 62, []string{"do not fit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := fmt.Sprintf("freetest%d-%s", os.Getpid(), strings.ReplaceAll(tc.name, " ", ""))
			p, _, err := (Backend{}).Allocate(context.Background(), 0, tc.world, tc.bytes, group)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Allocate: %v", err)
				}
				p.Close()
				return
			}
			if err == nil {
				p.Close()
				t.Fatalf("Allocate of %d x %d bytes with %d free accepted", tc.world, tc.bytes, free)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(Dir(), FilePrefix+group+"*")); len(left) > 0 {
				t.Errorf("refused allocation left %v", left)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {64 << 20, "64.0 MiB"}, {3 << 29, "1.5 GiB"}, {1 << 50, "1.0 PiB"}, {1<<63 - 1, "8.0 EiB"}} {
		if got := formatBytes(tc.n); got != tc.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
