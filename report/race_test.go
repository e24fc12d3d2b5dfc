package report

import "testing"

// skipLogsUnderRace skips a test that renders reports from every committed
// benchmark log and landscape when the race detector is on. The package
// starts no goroutine and the test runs on one, so -race finds nothing there, while it makes the test
// about ten times slower on the 2-core CI machine. `make test` runs it
// again without -race (NORACE_TESTS in the Makefile).
func skipLogsUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("reads every committed log: run without -race (make test does)")
	}
}
