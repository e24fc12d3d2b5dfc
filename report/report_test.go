package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/report/reporttest"
	"github.com/symmtune/symmtune/tuner"
)

// TestReportsFromCommittedLogs renders reports from the GPU benchmark logs
// committed under bench/results (each archive's logs with its peers CSVs,
// and the re-check's pattern searches) and from the recorded landscapes,
// and checks every plot against the logs.
func TestReportsFromCommittedLogs(t *testing.T) {
	skipLogsUnderRace(t)
	archives, err := filepath.Glob("../bench/results/*-logs.tgz")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no benchmark log archives under bench/results (%v)", err)
	}
	for _, a := range archives {
		t.Run(filepath.Base(a), func(t *testing.T) {
			dir := untar(t, a)
			logs, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
			if len(logs) == 0 {
				t.Fatalf("archive holds no trial logs")
			}
			in := Input{Logs: []string{filepath.Dir(logs[0])}}
			peerFiles, _ := filepath.Glob(filepath.Join(dir, "*", "peers-*.csv"))
			for _, p := range peerFiles {
				in.Peers = append(in.Peers, PeerFile{Path: p})
			}
			checkReport(t, in, reporttest.Expect{Logs: logs, PeerPoints: peerPoints(t, peerFiles)})
		})
	}
	t.Run("recheck", func(t *testing.T) {
		logs, _ := filepath.Glob("../bench/results/2026-11-21-recheck/*.jsonl")
		checkReport(t, Input{Logs: []string{"../bench/results/2026-11-21-recheck"}}, reporttest.Expect{Logs: logs})
	})
	t.Run("landscapes", func(t *testing.T) {
		logs, _ := triallog.Glob("../tuner/testdata/landscape-*.jsonl")
		checkReport(t, Input{Logs: []string{"../tuner/testdata"}}, reporttest.Expect{Logs: logs})
	})
}

func checkReport(t *testing.T, in Input, want reporttest.Expect) {
	t.Helper()
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, d, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	reporttest.Check(t, b.Bytes(), want)
}

// peerPoints counts the rows of peers CSVs (named ...-wWORLD.csv) that
// each latency plot, "kernel|world", must draw: peer_baselines.py's kinds
// are drawn on their kernels' plots, the matrix product alone on both
// matmul kernels'.
func peerPoints(t *testing.T, files []string) map[string]int {
	kernels := map[string][]string{"allreduce": {"allreduce"}, "mmrs": {"matmulrs"}, "agmm": {"agmm"}, "mm": {"matmulrs", "agmm"}}
	out := map[string]int{}
	for _, path := range files {
		world := strings.TrimSuffix(path[strings.LastIndex(path, "-w")+2:], ".csv")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ",")
			if _, err := strconv.ParseFloat(f[len(f)-1], 64); len(f) != 4 || err != nil {
				continue
			}
			for _, k := range kernels[f[0]] {
				out[k+"|"+world]++
			}
		}
	}
	return out
}

func untar(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(name, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadBadInput covers what the CLI's bad-input test does not: each
// is an *tuner.InputError (exit code 2) naming the file.
func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return reporttest.WriteFile(t, dir, name, text) }
	trial := func(world int) string {
		return `{"config":{"a":1},"status":"ok","score_us":3,"kernel":"k","backend":"cpu","world":` + strconv.Itoa(world) + `,"dtype":"f32","shape":"n=8"}` + "\n"
	}
	w2, w4 := write("w2.jsonl", trial(2)), write("w4.jsonl", trial(4))
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"other JSON lines", Input{Logs: []string{write("other.jsonl", `{"name":"x"}`+"\n")}}, "other.jsonl: line 1: not a symmtune trial: no config"},
		{"trial without its job", Input{Logs: []string{write("nojob.jsonl", `{"config":{"a":1},"status":"ok"}`+"\n")}}, "nojob.jsonl: line 1: not a symmtune trial: no kernel"},
		{"only a torn line", Input{Logs: []string{write("torn.jsonl", `{"config":{"a":1},"sta`)}}, "torn.jsonl: not a symmtune trial log"},
		{"bad shape", Input{Logs: []string{write("shape.jsonl", strings.Replace(trial(2), "n=8", "n=eight", 1))}}, "shape.jsonl: line 1: shape"},
		{"corrupt gzip", Input{Logs: []string{write("bad.jsonl.gz", trial(2))}}, "bad.jsonl.gz: corrupt gzip data: gzip: invalid header"},
		{"empty cache and no log", Input{CachePath: filepath.Join(dir, "none.toml")}, "nothing to report"},
		{"peers of unknown world", Input{Logs: []string{w2, w4}, Peers: []PeerFile{{Path: write("peers.csv", "allreduce,nccl,4096,3.0\n")}}}, "give it as --peers 4="},
		{"peers of bad shape", Input{Logs: []string{w2}, Peers: []PeerFile{{Path: write("peers-w2.csv", "allreduce,nccl,4 KiB,3.0\n")}}}, "line 1: shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.in)
			var ie *tuner.InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v; want an *tuner.InputError containing %q", err, tc.want)
			}
		})
	}
}

func TestPeersWorldFromName(t *testing.T) {
	for name, want := range map[string]int{
		"peers-w4.csv": 4, "peers-h200x2-2026-11-21.csv": 2, "bench_w8.csv": 8, "peers.csv": 0, "mm-4096x1792.csv": 0,
	} {
		got := 0
		if m := worldInName.FindStringSubmatch(name); m != nil {
			got, _ = strconv.Atoi(m[1])
		}
		if got != want {
			t.Errorf("%s: world %d, want %d", name, got, want)
		}
	}
	if p := ParsePeerArg("4=a=b.csv"); p.World != 4 || p.Path != "a=b.csv" {
		t.Errorf("ParsePeerArg(4=a=b.csv) = %+v", p)
	}
	if p := ParsePeerArg("x=b.csv"); p.World != 0 || p.Path != "x=b.csv" {
		t.Errorf("ParsePeerArg(x=b.csv) = %+v", p)
	}
}

// TestOptimumOfAnExhaustiveSearchOfTheSameJob: a budgeted search's plot
// shows the optimum an exhaustive search of the same job (same hardware)
// found, naming its log; one on other hardware lends nothing.
func TestOptimumOfAnExhaustiveSearchOfTheSameJob(t *testing.T) {
	dir := t.TempDir()
	trial := func(a int, score float64, strategy, hw string) string {
		return `{"config":{"a":` + strconv.Itoa(a) + `},"status":"ok","score_us":` + strconv.FormatFloat(score, 'f', -1, 64) +
			`,"kernel":"k","backend":"cpu","world":2,"dtype":"f32","shape":"n=8","strategy":"` + strategy + `","valid_configs":4,"hardware":"` + hw + `"}` + "\n"
	}
	exh := reporttest.WriteFile(t, dir, "exhaustive.jsonl", trial(1, 9, "exhaustive", "h1")+trial(2, 7, "exhaustive", "h1")+trial(3, 5, "exhaustive", "h1")+trial(4, 2.5, "exhaustive", "h1"))
	budgeted := reporttest.WriteFile(t, dir, "pattern.jsonl", trial(1, 9.2, "pattern", "h1")+trial(3, 5.1, "pattern", "h1"))
	other := reporttest.WriteFile(t, dir, "other.jsonl", trial(1, 9.2, "pattern", "h2")+trial(3, 5.1, "pattern", "h2"))
	d, err := Load(Input{Logs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, d, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	reporttest.Check(t, b.Bytes(), reporttest.Expect{Logs: []string{exh, budgeted, other}})
	if n := strings.Count(page, "The exhaustive optimum (2.5 µs) is from "+exh); n != 1 {
		t.Errorf("the exhaustive optimum is lent %d times, want once (to %s, not to the other hardware's search)", n, budgeted)
	}
}
