package cache

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symmtune/symmtune/space"
)

// Environment of the helper writer process (TestHelperWriter).
const (
	envHelper = "SYMMTUNE_CACHE_HELPER" // "1" in a helper
	envPath   = "SYMMTUNE_CACHE_HELPER_PATH"
	envID     = "SYMMTUNE_CACHE_HELPER_ID"
	envCount  = "SYMMTUNE_CACHE_HELPER_COUNT" // entries to write; 0 = forever
	envHang   = "SYMMTUNE_CACHE_HELPER_HANG"  // "1": hang before renaming the first temp file
)

// writerEntry is entry j of writer id: distinct keys for all (id, j).
func writerEntry(id, j int) Entry {
	return entry(int64(id*100000+j+1), func(e *Entry) {
		e.Config = space.Config{"writer": space.Int(int64(id)), "j": space.Int(int64(j))}
		e.TunedAt = t0.Add(time.Duration(j) * time.Second)
	})
}

// TestHelperWriter is not a test: it is the body of the writer processes
// the tests below start by re-running the test binary.
func TestHelperWriter(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("helper process for the concurrency tests")
	}
	path := os.Getenv(envPath)
	id, _ := strconv.Atoi(os.Getenv(envID))
	count, _ := strconv.Atoi(os.Getenv(envCount))
	if os.Getenv(envHang) == "1" {
		beforeRename = func(tmp string) error {
			fmt.Printf("hanging %s\n", tmp)
			os.Stdout.Sync()
			select {} // until killed
		}
	}
	for j := 0; count == 0 || j < count; j++ {
		if err := Put(path, writerEntry(id, j)); err != nil {
			fmt.Fprintf(os.Stderr, "writer %d: Put %d: %v\n", id, j, err)
			os.Exit(3)
		}
		fmt.Printf("committed %d\n", j)
	}
}

func helperCmd(t *testing.T, path string, id, count int, hang bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envHelper+"=1", envPath+"="+path, envID+"="+strconv.Itoa(id), envCount+"="+strconv.Itoa(count))
	if hang {
		cmd.Env = append(cmd.Env, envHang+"=1")
	}
	return cmd
}

// wantWriters checks that the file holds exactly entries 0..n-1 of each writer.
func wantWriters(t *testing.T, path string, writers, n int) {
	t.Helper()
	got := map[string]bool{}
	for _, e := range mustLoad(t, path).Entries() {
		got[e.Key.String()] = true
	}
	missing := 0
	for id := 0; id < writers; id++ {
		for j := 0; j < n; j++ {
			if !got[writerEntry(id, j).Key.String()] {
				missing++
			}
		}
	}
	if missing > 0 || len(got) != writers*n {
		t.Errorf("file holds %d entries, %d of the expected %d missing", len(got), missing, writers*n)
	}
}

func TestConcurrentProcesses(t *testing.T) {
	const writers, perWriter = 8, 20
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*strings.Builder, writers)
	for i := range cmds {
		cmds[i] = helperCmd(t, path, i, perWriter, false)
		outs[i] = &strings.Builder{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	// Start them all before waiting on any, so they overlap.
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatalf("start writer %d: %v", i, err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, outs[i])
		}
		if n := strings.Count(outs[i].String(), "committed "); n != perWriter {
			t.Errorf("writer %d committed %d entries, want %d:\n%s", i, n, perWriter, outs[i])
		}
	}
	wantWriters(t, path, writers, perWriter)
	assertNoTemps(t, dir)
}

func TestConcurrentGoroutines(t *testing.T) {
	const writers, perWriter = 8, 20
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for id := 0; id < writers; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perWriter; j++ {
				if err := Put(path, writerEntry(id, j)); err != nil {
					errs <- err
				}
				// Readers run alongside the writers and must always see a whole file.
				if j%4 == 0 {
					if _, err := Load(path); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantWriters(t, path, writers, perWriter)
	assertNoTemps(t, dir)
}

// A writer killed (SIGKILL) at a random point of its loop never costs
// committed entries, and the next writer is not blocked by its lock.
func TestKilledWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	for round := 0; round < 3; round++ {
		cmd := helperCmd(t, path, round, 0, false)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		committed := 0
		sc := bufio.NewScanner(stdout)
		for committed < 10+5*round && sc.Scan() {
			if strings.HasPrefix(sc.Text(), "committed ") {
				committed++
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // lines already printed count too
			if strings.HasPrefix(sc.Text(), "committed ") {
				committed++
			}
		}
		cmd.Wait()
		if committed == 0 {
			t.Fatalf("round %d: writer committed nothing: %s", round, stderr.String())
		}
		s := mustLoad(t, path)
		have := map[string]bool{}
		for _, e := range s.Entries() {
			have[e.Key.String()] = true
		}
		for j := 0; j < committed; j++ {
			if !have[writerEntry(round, j).Key.String()] {
				t.Errorf("round %d: committed entry %d lost", round, j)
			}
		}
		for r := 0; r < round; r++ { // earlier rounds' entries survive too
			if !have[writerEntry(r, 0).Key.String()] {
				t.Errorf("round %d: entry of round %d lost", round, r)
			}
		}
	}
	putWithin(t, path, entry(7), 10*time.Second)
	assertNoTemps(t, dir)
}

// A writer killed after writing its temp file but before the rename, while
// holding the lock: the file still loads with everything committed before,
// the lock dies with the process, and the next Put sweeps the stale temp.
func TestKilledMidWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	before := []Entry{entry(1), entry(2), entry(3)}
	if err := PutAll(path, before); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)

	cmd := helperCmd(t, path, 9, 1, true)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	tmp := ""
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "hanging "); ok {
			tmp = rest
			break
		}
	}
	if tmp == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper never reached the rename: %s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed writer's temp file should be there: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(orig) {
		t.Error("the killed writer changed the file")
	}
	entriesEqual(t, mustLoad(t, path).Entries(), before)

	putWithin(t, path, entry(4), 10*time.Second)
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{entry(1), entry(2), entry(3), entry(4)})
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("stale temp file %s not swept (stat err %v)", tmp, err)
	}
	assertNoTemps(t, dir)
}

// A stale, half-written temp file from some earlier crash neither breaks
// Load nor survives the next Put.
func TestStaleTempFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "configs.toml")
	if err := Put(path, entry(1)); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, tempPrefix(path)+"12345")
	if err := os.WriteFile(stale, []byte("version = 1\n[[entry]]\nkernel = \"hal"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt") // not ours: must stay
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{entry(1)})
	if err := Put(path, entry(2)); err != nil {
		t.Fatal(err)
	}
	entriesEqual(t, mustLoad(t, path).Entries(), []Entry{entry(1), entry(2)})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp not removed (stat err %v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("unrelated file removed: %v", err)
	}
}

func putWithin(t *testing.T, path string, e Entry, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Put(path, e) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Put after the kill: %v", err)
		}
	case <-time.After(d):
		t.Fatalf("Put after the kill blocked for %v: lock not released?", d)
	}
}
