package main

// Fleet tests: sharded job files run as separate symmtune processes (the
// real CLI and real plugins), writing to a real redis-server and to files
// merged with `cache merge`.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/cache/storage"
	"github.com/symmtune/symmtune/internal/redistest"
	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner"
)

// fleetJobs is a job file of tiny CPU jobs: six slots, quick to tune.
const fleetJobs = `backend = "cpu"
strategy = "auto"
warmup = 1
iters = 3
budget_trials = 6

[[job]]
kernel = "allreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=256", "n=1024", "n=4096", "n=16384"]

[[job]]
kernel = "matmulrs"
worlds = [2]
dtypes = ["f32"]
shapes = ["m=32,n=32,k=32"]

[[job]]
kernel = "agmm"
worlds = [2]
dtypes = ["f32"]
shapes = ["m=32,n=32,k=32"]
`

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// symmtuneBin builds the CLI next to the test's plugins, once.
func symmtuneBin(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		cliPath = filepath.Join(pluginDir, "symmtune")
		out, err := exec.Command("go", "build", "-o", cliPath, ".").CombinedOutput()
		if err != nil {
			cliErr = fmt.Errorf("build symmtune: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

type proc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
}

// startCLI starts the symmtune binary with its own environment: no cache
// from the developer's, a private XDG cache directory, and env on top.
func startCLI(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(symmtuneBin(t), append([]string{"--plugin-dir", pluginDir}, args...)...)}
	p.cmd.Env = append(os.Environ(), "SYMMTUNE_CACHE=", "XDG_CACHE_HOME="+t.TempDir(),
		storage.EnvRedisUsername+"=", storage.EnvRedisPassword+"=")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.done) }()
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) wait() int {
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// runAll runs the command lines at once and fails on any nonzero exit.
func runAll(t *testing.T, cmds [][]string) {
	t.Helper()
	ps := make([]*proc, len(cmds))
	for i, args := range cmds {
		ps[i] = startCLI(t, nil, args...)
	}
	for i, p := range ps {
		if code := p.wait(); code != 0 {
			t.Errorf("symmtune %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(cmds[i], " "), code, &p.out, &p.err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func loadAt(t *testing.T, loc string) []cache.Entry {
	t.Helper()
	st, err := storage.Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Entries()
}

func encodeEntries(t *testing.T, es []cache.Entry) string {
	t.Helper()
	var b strings.Builder
	for _, e := range es {
		enc, err := cache.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(enc)
	}
	return b.String()
}

// logWinners reads a trial log: per job (kernel/world/dtype/shape text) the
// winner's median, tuner.Winner's pick of the re-measured finalists (the
// fastest, or the default where that is not DefaultMargin faster).
func logWinners(t *testing.T, path string) map[string]float64 {
	t.Helper()
	lf, err := triallog.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	refined := map[string][]tuner.Result{}
	defaults := map[string]space.Config{}
	for _, r := range lf.Results {
		sh, err := space.ParseShape(r.Shape, nil)
		if err != nil {
			t.Fatalf("%s: shape %q: %v", path, r.Shape, err)
		}
		k := fmt.Sprintf("%s/w%d/%s/%s", r.Kernel, r.World, r.Dtype, sh)
		if r.Default {
			defaults[k] = r.Config
		}
		if r.Refined {
			refined[k] = append(refined[k], r)
		}
	}
	best := map[string]float64{}
	for k, rs := range refined {
		if w, ok := tuner.Winner(rs, defaults[k]); ok {
			best[k] = w.Score()
		}
	}
	return best
}

// TestFleetRedisAndFilesAgree runs a sharded job file as 8 concurrent
// searches (4 shards, each run twice, so every slot has two writers at
// once) into Redis, and again into 8 files merged with `cache merge`:
// every job's winner must be present both ways, Redis must hold the faster
// of each slot's two winners, and the same 8 files written into Redis by 8
// concurrent `cache merge` processes must give exactly the merged file.
func TestFleetRedisAndFilesAgree(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "jobs.toml")
	if err := os.WriteFile(jobFile, []byte(fleetJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	const shards, copies = 4, 2
	search := func(i int, cacheLoc, log string) []string {
		return []string{"search", "--config", jobFile, "--shard", fmt.Sprintf("%d/%d", i%shards+1, shards), "--cache", cacheLoc, "--log", log}
	}
	var toRedis, toFiles [][]string
	var files, redisLogs []string
	for i := range shards * copies {
		redisLogs = append(redisLogs, filepath.Join(dir, fmt.Sprintf("redis-%d.jsonl", i)))
		files = append(files, filepath.Join(dir, fmt.Sprintf("node-%d.toml", i)))
		toRedis = append(toRedis, search(i, srv.URL(0), redisLogs[i]))
		toFiles = append(toFiles, search(i, files[i], filepath.Join(dir, fmt.Sprintf("file-%d.jsonl", i))))
	}
	start := time.Now()
	runAll(t, toRedis)
	t.Logf("8 concurrent searches into Redis: %s", time.Since(start).Round(time.Millisecond))
	runAll(t, toFiles)
	merged := filepath.Join(dir, "merged.toml")
	runAll(t, [][]string{append([]string{"cache", "merge", merged}, files...)})

	inRedis, inFile := loadAt(t, srv.URL(0)), loadAt(t, merged)
	const slots = 6
	if len(inRedis) != slots || len(inFile) != slots {
		t.Fatalf("Redis holds %d entries, the merged file %d; the job file has %d slots", len(inRedis), len(inFile), slots)
	}
	slotsOf := func(es []cache.Entry) []string {
		var ids []string
		for _, e := range es {
			ids = append(ids, e.Key.Slot().AnyVersion().Ident())
		}
		return ids
	}
	if !slices.Equal(slotsOf(inRedis), slotsOf(inFile)) {
		t.Fatalf("Redis and the merged file hold other slots:\n%v\n%v", slotsOf(inRedis), slotsOf(inFile))
	}

	// Redis keeps the faster of the two concurrent winners of each slot.
	winners := map[string][]float64{}
	for _, log := range redisLogs {
		for job, us := range logWinners(t, log) {
			winners[job] = append(winners[job], us)
		}
	}
	for _, e := range inRedis {
		job := fmt.Sprintf("%s/w%d/%s/%s", e.Kernel, e.World, e.Dtype, e.Shape)
		ws := winners[job]
		if len(ws) != copies {
			t.Fatalf("%s: %d winners in the trial logs, want %d (logs hold %v)", job, len(ws), copies, winners)
		}
		if e.MedianUS != slices.Min(ws) {
			t.Errorf("%s: Redis holds %.3f µs; the two searches found %v", job, e.MedianUS, ws)
		}
	}

	// The same files through Redis: 8 concurrent merges into database 1.
	var pushes [][]string
	for _, f := range files {
		pushes = append(pushes, []string{"cache", "merge", srv.URL(1), f})
	}
	runAll(t, pushes)
	if got, want := encodeEntries(t, loadAt(t, srv.URL(1))), encodeEntries(t, inFile); got != want {
		t.Fatalf("8 concurrent merges into Redis hold\n%s\nthe merged file holds\n%s", got, want)
	}
	// And back: Redis merged into a file is that file again.
	back := filepath.Join(dir, "back.toml")
	runAll(t, [][]string{{"cache", "merge", back, srv.URL(1)}})
	if b, m := mustRead(t, back), mustRead(t, merged); b != m {
		t.Fatalf("Redis merged back into a file differs from the merged file:\n%s\n---\n%s", b, m)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFleetRedisKilledMidSearch kills the Redis server while a search of
// several jobs is writing to it: the search must say so and stop, and the
// restarted server must hold only whole entries, each listed in the index.
func TestFleetRedisKilledMidSearch(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "jobs.toml")
	if err := os.WriteFile(jobFile, []byte(fleetJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "trials.jsonl")
	p := startCLI(t, nil, "search", "--config", jobFile, "--cache", srv.URL(0), "--log", log)
	client := srv.Client(0, "", "")
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if n, _ := client.SCard(ctx, "symmtune:v1:slots").Result(); n >= 1 {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no entry reached Redis\nstdout:\n%s\nstderr:\n%s", &p.out, &p.err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Kill()
	code := p.wait()
	stderr := p.err.String()
	if code != exitFailure || !strings.Contains(stderr, "cache "+srv.URL(0)) || !strings.Contains(stderr, "stopping") ||
		!strings.Contains(stderr, log) {
		t.Fatalf("search after the server died: exit %d, want %d with a message naming the cache and the trial log\nstdout:\n%s\nstderr:\n%s",
			code, exitFailure, &p.out, stderr)
	}
	if n := strings.Count("\n"+stderr, "\nsymmtune: "); n != 1 {
		t.Errorf("want one error line, got %d:\n%s", n, stderr)
	}

	srv.Restart()
	client = srv.Client(0, "", "")
	index, err := client.SMembers(ctx, "symmtune:v1:slots").Result()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := client.Keys(ctx, "symmtune:v1:slot:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(index) == 0 || len(index) != len(keys) {
		t.Fatalf("after the restart: %d slots in the index, %d entry keys", len(index), len(keys))
	}
	for _, k := range keys {
		v, err := client.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		e, err := cache.DecodeEntry(k, []byte(v))
		if err != nil {
			t.Fatalf("half-written entry %s: %v", k, err)
		}
		if !slices.Contains(index, e.Key.Slot().AnyVersion().Ident()) || "symmtune:v1:slot:"+e.Key.Slot().AnyVersion().Ident() != k {
			t.Errorf("entry %s is not where the index says", k)
		}
	}
	if got := loadAt(t, srv.URL(0)); len(got) != len(keys) {
		t.Errorf("Load reads %d entries of %d", len(got), len(keys))
	}
}

// TestFleetCredentialsNeverShown runs every command that touches a cache
// against a server that needs a user and password, given in the URL and in
// the environment, with -v: neither may appear in any output, trial log or
// file, nor in errors for a wrong password.
func TestFleetCredentialsNeverShown(t *testing.T) {
	const user, pass = "fleet-user-4d2f", "fleet-pass-8c1e"
	srv := redistest.Start(t, "--user", user, "on", ">"+pass, "~*", "&*", "+@all", "--user", "default", "off")
	dir := t.TempDir()
	host := fmt.Sprintf("127.0.0.1:%d", srv.Port)
	withCreds := "redis://" + user + ":" + pass + "@" + host + "/0"
	credEnv := []string{storage.EnvRedisUsername + "=" + user, storage.EnvRedisPassword + "=" + pass}
	log := filepath.Join(dir, "trials.jsonl")
	file := filepath.Join(dir, "local.toml")
	runs := []struct {
		env  []string
		args []string
		code int
	}{
		{nil, []string{"-v", "search", "--kernel", "allreduce", "--world", "2", "--shape", "n=512", "--backend", "cpu", "--iters", "2", "--budget-trials", "4", "--cache", withCreds, "--log", log}, 0},
		{nil, []string{"show", "--cache", withCreds}, 0},
		{[]string{"SYMMTUNE_CACHE=" + withCreds}, []string{"show"}, 0},
		{[]string{"SYMMTUNE_CACHE=" + withCreds}, []string{"search", "--help"}, 0},
		{credEnv, []string{"show", "--cache", "redis://" + host + "/0"}, 0},
		{nil, []string{"lookup", "--kernel", "allreduce", "--world", "2", "--shape", "n=512", "--backend", "cpu", "--cache", withCreds}, 0},
		{nil, []string{"lookup", "--any-hardware", "--kernel", "allreduce", "--world", "2", "--shape", "n=4", "--json", "--cache", withCreds}, 0},
		{nil, []string{"lookup", "--any-hardware", "--kernel", "nope", "--world", "2", "--shape", "n=4", "--cache", withCreds}, exitNotFound},
		{nil, []string{"cache", "merge", file, withCreds}, 0},
		{credEnv, []string{"cache", "merge", "redis://" + host + "/1", file}, 0},
		{nil, []string{"show", "--cache", "redis://" + user + ":wrong-" + pass + "@" + host + "/0"}, exitFailure},
		// Refused before any trial: no log, no hint naming one.
		{nil, []string{"search", "--kernel", "allreduce", "--world", "2", "--shape", "n=512", "--backend", "cpu", "--cache",
			"redis://" + user + ":wrong-" + pass + "@" + host + "/0", "--log", filepath.Join(dir, "never.jsonl")}, exitUsage},
		{nil, []string{"show", "--cache", "redis://" + user + ":" + pass + "@" + host + "/x"}, exitUsage},
		{nil, []string{"show", "--cache", "redis://" + user + ":p%zz" + pass + "@" + host + "/0"}, exitUsage},
	}
	for _, r := range runs {
		p := startCLI(t, r.env, r.args...)
		code := p.wait()
		if code != r.code {
			t.Errorf("symmtune %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), code, r.code, &p.out, &p.err)
		}
		for _, secret := range []string{user, pass} {
			if strings.Contains(p.out.String()+p.err.String(), secret) {
				t.Errorf("symmtune %s shows a credential:\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), &p.out, &p.err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never.jsonl")); err == nil {
		t.Error("a search refused for a wrong password wrote a trial log")
	}
	for _, f := range []string{log, file} {
		if s := mustRead(t, f); strings.Contains(s, user) || strings.Contains(s, pass) {
			t.Errorf("%s holds a credential", f)
		}
	}
	if got := loadAt(t, file); len(got) != 1 {
		t.Errorf("the search's winner did not come back through merge: %d entries", len(got))
	}
}
