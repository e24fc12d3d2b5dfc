package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// shardSpec is the part of a job file one run tunes: shard index
// (0-based) of count. from says where it came from, for the user.
type shardSpec struct {
	index, count int
	from         string
}

func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.index+1, s.count) }

// resolveShard reads --shard K/N (K counted from 1, like the shards of test
// runners), else the scheduler's environment: a Slurm job array
// (SLURM_ARRAY_TASK_ID, _MIN, _STEP, _COUNT) or a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX, counted from 0, with --shard-count for the number
// of completions, which Kubernetes does not export). ok is false when the
// run is not sharded.
func resolveShard(flag string, countFlag int, getenv func(string) string) (spec shardSpec, ok bool, err error) {
	if countFlag < 0 {
		return shardSpec{}, false, errors.New("--shard-count must be at least 1")
	}
	if flag != "" {
		k, n, cut := strings.Cut(flag, "/")
		ki, kerr := strconv.Atoi(strings.TrimSpace(k))
		ni, nerr := strconv.Atoi(strings.TrimSpace(n))
		if !cut || kerr != nil || nerr != nil || ni < 1 || ki < 1 || ki > ni {
			return shardSpec{}, false, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N, e.g. --shard 2/4", flag)
		}
		if countFlag != 0 && countFlag != ni {
			return shardSpec{}, false, fmt.Errorf("--shard %s and --shard-count %d disagree", flag, countFlag)
		}
		return shardSpec{index: ki - 1, count: ni, from: "--shard"}, true, nil
	}
	envInt := func(name string) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			return 0, true, fmt.Errorf("%s=%q is not a number >= 0", name, v)
		}
		return i, true, nil
	}
	if id, set, err := envInt("SLURM_ARRAY_TASK_ID"); err != nil || set {
		if err != nil {
			return shardSpec{}, false, err
		}
		lo, _, err := envInt("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return shardSpec{}, false, err
		}
		step, stepSet, err := envInt("SLURM_ARRAY_TASK_STEP")
		if err != nil {
			return shardSpec{}, false, err
		}
		if !stepSet || step == 0 {
			step = 1
		}
		count, countSet, err := envInt("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return shardSpec{}, false, err
		}
		switch {
		case countFlag != 0 && countSet && countFlag != count:
			return shardSpec{}, false, fmt.Errorf("--shard-count %d and SLURM_ARRAY_TASK_COUNT=%d disagree", countFlag, count)
		case countFlag != 0:
			count = countFlag
		case !countSet || count < 1:
			return shardSpec{}, false, errors.New("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: give --shard-count N (or --shard K/N)")
		}
		if (id-lo)%step != 0 || id < lo || (id-lo)/step >= count {
			return shardSpec{}, false, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not one of %d tasks from %d in steps of %d: use a plain range (--array=0-%d) or pass --shard K/N", id, count, lo, step, count-1)
		}
		return shardSpec{index: (id - lo) / step, count: count, from: "SLURM_ARRAY_TASK_ID=" + strconv.Itoa(id)}, true, nil
	}
	if idx, set, err := envInt("JOB_COMPLETION_INDEX"); err != nil || set {
		if err != nil {
			return shardSpec{}, false, err
		}
		if countFlag == 0 {
			return shardSpec{}, false, fmt.Errorf("JOB_COMPLETION_INDEX=%d is set: give --shard-count N, the Indexed Job's completions (or --shard K/N)", idx)
		}
		if idx >= countFlag {
			return shardSpec{}, false, fmt.Errorf("JOB_COMPLETION_INDEX=%d is not below --shard-count %d", idx, countFlag)
		}
		return shardSpec{index: idx, count: countFlag, from: "JOB_COMPLETION_INDEX=" + strconv.Itoa(idx)}, true, nil
	}
	if countFlag != 0 {
		return shardSpec{}, false, errors.New("--shard-count needs JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID in the environment (or use --shard K/N)")
	}
	return shardSpec{}, false, nil
}
