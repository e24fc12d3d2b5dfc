package libops

import "github.com/symmtune/symmtune/internal/triallog"

// triallogOps reads trial logs with internal/triallog, the one parser of
// them, so Python (bench's tables) reads a log the way the host, the
// replay and the report do: a torn last line skipped, any other malformed
// line an error naming the file and line.
func triallogOps() map[string]op {
	return map[string]op{
		"triallog.read": handler("the trial log at {path}: {results, lines, torn}, its trials as they were logged, their line numbers and a torn last line's number (0: none)",
			func(r struct {
				Path string `json:"path"`
			}) (any, error) {
				if r.Path == "" {
					return nil, bad("path: missing")
				}
				lf, err := triallog.Read(r.Path)
				if err != nil {
					return nil, badErr(err)
				}
				return map[string]any{"results": nonNil(lf.Results), "lines": nonNil(lf.Lines), "torn": lf.Torn}, nil
			}),
	}
}
