package gemmtest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/kernels/gemm"
	"github.com/symmtune/symmtune/space"
)

// TestSearchRealPlugins builds the symmtune CLI and both GEMM plugins and
// runs exhaustive searches on real plugin processes (one per rank) at
// worlds 2 and 4: every valid config must verify on every rank, the winner
// must land in the cache, and lookup must return it. (Leftover shared
// memory is the host's to test: other searches may share this machine.)
func TestSearchRealPlugins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries and starts plugin processes")
	}
	bin := t.TempDir()
	for pkg, name := range map[string]string{
		"../../../cmd/symmtune":     "symmtune",
		"../../../plugins/matmulrs": "symmtune-plugin-matmulrs",
		"../../../plugins/agmm":     "symmtune-plugin-agmm",
	} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	// 32 rows per rank at world 4, so block_m and comm_block_m up to 32
	// (and 64 at world 2) are valid: a small space, fast trials.
	const shape = "m=128,n=64,k=64"
	for _, kernel := range []string{"matmulrs", "agmm"} {
		for _, world := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/w%d", kernel, world), func(t *testing.T) {
				dir := t.TempDir()
				cachePath, logPath := filepath.Join(dir, "c.toml"), filepath.Join(dir, "trials.jsonl")
				run := func(args ...string) string {
					t.Helper()
					cmd := exec.Command(filepath.Join(bin, "symmtune"), append(args,
						"--plugin-dir", bin, "--cache", cachePath)...)
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("symmtune %s: %v\n%s", strings.Join(args, " "), err, out)
					}
					return string(out)
				}
				w := fmt.Sprint(world)
				out := run("search", "--kernel", kernel, "--world", w, "--shape", shape, "--dtype", "f32",
					"--backend", "cpu", "--strategy", "exhaustive", "--warmup", "1", "--iters", "3", "--log", logPath)
				if !strings.Contains(out, "winner:") {
					t.Fatalf("no winner in:\n%s", out)
				}

				d, _ := gemm.ParseDims(space.Shape{"m": 128, "n": 64, "k": 64})
				valid := 0
				for _, c := range gemm.Space().Enumerate() {
					if cfg, err := gemm.ParseConfig(c); err == nil && gemm.Validate(cfg, d, world) == nil {
						valid++
					}
				}
				seen := map[string]bool{}
				impls := map[string]bool{}
				lf, err := triallog.Read(logPath)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range lf.Results {
					if l.Status != triallog.StatusOK {
						t.Errorf("config %s: status %s: %s", l.Config, l.Status, l.Error)
					}
					if len(l.RanksUS) != world {
						t.Errorf("config %s: %d rank times for world %d", l.Config, len(l.RanksUS), world)
					}
					seen[l.Config.String()] = true
					impls[l.Config["impl"].Str] = true
				}
				if len(seen) != valid || !impls[gemm.Fused] || !impls[gemm.Sequential] {
					t.Errorf("log covers %d configs (impls %v), want all %d valid ones", len(seen), impls, valid)
				}

				store, err := cache.Load(cachePath)
				if err != nil {
					t.Fatal(err)
				}
				es := store.Entries()
				if len(es) != 1 || es[0].Kernel != kernel || es[0].World != world || es[0].MedianUS <= 0 {
					t.Fatalf("cache entries: %+v", es)
				}
				got := strings.TrimSpace(run("lookup", "--kernel", kernel, "--world", w, "--shape", shape,
					"--dtype", "f32", "--backend", "cpu"))
				if got != es[0].Config.String() {
					t.Errorf("lookup printed %q, want the cached %s", got, es[0].Config)
				}
			})
		}
	}
}
