package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/symmtune/symmtune/internal/triallog"
	"github.com/symmtune/symmtune/tuner"
)

// logExists reports whether a search wrote its trial log: a hint must
// never name a log that was not created.
func logExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

// resumeHint is "; the trials so far are in LOG (continue with --resume
// LOG when)" when the log exists, else "; no trial had run".
func resumeHint(logPath, when string) string {
	if !logExists(logPath) {
		return "; no trial had run"
	}
	return fmt.Sprintf(": the trials so far are in %s (continue with --resume %s %s)", logPath, logPath, when)
}

// defaultLogPath keeps every search's trials even when --log was not given:
// no measurement is lost to a forgotten flag. Shards get their own logs.
func defaultLogPath(dir string, j tuner.Job, shard *shardSpec) string {
	name := fmt.Sprintf("%s-w%d-%s-%s", j.Kernel, j.World, time.Now().Format("20060102-150405"), strings.NewReplacer("=", "", ",", "_").Replace(j.ShapeText))
	if shard != nil {
		name += fmt.Sprintf("-shard%dof%d", shard.index+1, shard.count)
	}
	return filepath.Join(dir, "logs", name+".jsonl")
}

// checkLogNotGzipped refuses a search whose new trials would go to a .gz
// log (--log, or --resume without --log). Logs are written plain, one
// appended line per trial; lines appended to gzip data would leave a file
// no reader accepts. --resume may read a .gz log when --log names a plain
// one.
func checkLogNotGzipped(f *searchFlags) error {
	flag, path := "--log", f.logPath
	if path == "" {
		flag, path = "--resume", f.resume
	}
	if triallog.Gzipped(path) {
		return usageError{fmt.Errorf("%s %s: trial logs are written plain and cannot be appended to a gzipped one; give --log a plain file (e.g. trials.jsonl)", flag, path)}
	}
	return nil
}
