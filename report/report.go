// Package report turns what searches left behind — trial logs, the
// tuned-config cache, and peer timings (kind,impl,shape,us, as
// peer_baselines.py prints them) — into one self-contained HTML page of
// plots: per search, the best score against trial number, the score
// distribution with the winner and the default marked, and each
// parameter's effect; per kernel and world size, the tuned latency against
// problem size beside the peers'. Plots are drawn with gonum.org/v1/plot
// and inlined as SVG, so the page needs no network and no scripts.
//
// The package reads logs with tuner.ReadTrialLog (the one trial-log reader,
// internal/triallog, with bad input as tuner's *InputError) and is imported
// only by the CLI.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WriteFile renders the report to path: into a temporary file beside it,
// renamed over path only once complete, so a failure leaves no half-written
// report (and any earlier one intact).
func WriteFile(path string, d *Data, generated time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := Render(tmp, d, generated); err != nil {
		tmp.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
