package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveShard(t *testing.T) {
	tests := []struct {
		name      string
		flag      string
		count     int
		env       map[string]string
		want      string // "K/N from", "" for not sharded
		wantError string
	}{
		{name: "none", want: ""},
		{name: "flag", flag: "2/4", want: "2/4 --shard"},
		{name: "flag with spaces", flag: " 1 / 1 ", want: "1/1 --shard"},
		{name: "flag wins over env", flag: "3/3", env: map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8"}, want: "3/3 --shard"},
		{name: "flag and same count", flag: "1/2", count: 2, want: "1/2 --shard"},
		{name: "flag and other count", flag: "1/2", count: 3, wantError: "disagree"},
		{name: "flag K zero", flag: "0/4", wantError: "1 <= K <= N"},
		{name: "flag K past N", flag: "5/4", wantError: "1 <= K <= N"},
		{name: "flag garbage", flag: "2of4", wantError: "K/N"},
		{name: "slurm from 0", env: map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, want: "1/4 SLURM_ARRAY_TASK_ID=0"},
		{name: "slurm from 1", env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, want: "4/4 SLURM_ARRAY_TASK_ID=4"},
		{name: "slurm with step", env: map[string]string{"SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, want: "3/3 SLURM_ARRAY_TASK_ID=14"},
		{name: "slurm off step", env: map[string]string{"SLURM_ARRAY_TASK_ID": "13", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, wantError: "plain range"},
		{name: "slurm past count", env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4"}, wantError: "plain range"},
		{name: "slurm no count", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, wantError: "--shard-count"},
		{name: "slurm count flag", count: 2, env: map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, want: "2/2 SLURM_ARRAY_TASK_ID=1"},
		{name: "slurm bad id", env: map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, wantError: "not a number"},
		{name: "kubernetes", count: 3, env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, want: "1/3 JOB_COMPLETION_INDEX=0"},
		{name: "kubernetes last", count: 3, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, want: "3/3 JOB_COMPLETION_INDEX=2"},
		{name: "kubernetes no count", env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantError: "--shard-count"},
		{name: "kubernetes past count", count: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantError: "not below"},
		{name: "count alone", count: 2, wantError: "needs JOB_COMPLETION_INDEX"},
		{name: "count negative", count: -1, wantError: "at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, ok, err := resolveShard(tt.flag, tt.count, func(k string) string { return tt.env[k] })
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ok {
				got = spec.String() + " " + spec.from
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSearchShardBadInput(t *testing.T) {
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "jobs.toml")
	if err := os.WriteFile(jobFile, []byte(fleetJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	cachePath := filepath.Join(dir, "c.toml")
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"shard without a job file", nil, []string{"--kernel", "allreduce", "--world", "2", "--shape", "n=64", "--shard", "1/2"}},
		{"K past N", nil, []string{"--config", jobFile, "--shard", "3/2"}},
		{"Kubernetes index without a count", map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"--config", jobFile}},
		{"Slurm task past the count", map[string]string{"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "4"}, []string{"--config", jobFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, out, errs := cli(t, append([]string{"search", "--cache", cachePath, "--log", filepath.Join(dir, "t.jsonl")}, tt.args...)...)
			if code != exitUsage || strings.Count(errs, "\n") != 1 || out != "" {
				t.Fatalf("exit %d, want %d with one line and no output\nstdout:\n%s\nstderr:\n%s", code, exitUsage, out, errs)
			}
			if _, err := os.Stat(cachePath); err == nil {
				t.Fatal("the cache was written")
			}
		})
	}
}

// TestSearchEmptyShard: more shards than jobs leaves some shards empty;
// they say so and succeed without running or writing anything.
func TestSearchEmptyShard(t *testing.T) {
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "jobs.toml")
	if err := os.WriteFile(jobFile, []byte(fleetJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "7")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "0")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "8")
	code, out, errs := cli(t, "search", "--config", jobFile, "--cache", filepath.Join(dir, "c.toml"), "--log", filepath.Join(dir, "t.jsonl"))
	if code != 0 || !strings.Contains(out, "shard 8/8 (SLURM_ARRAY_TASK_ID=7): 0 of the 6 jobs") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("an empty shard left files: %v", entries)
	}
}
