//go:build race

package report

// raceDetector: this test binary runs under -race (see skipLogsUnderRace).
const raceDetector = true
