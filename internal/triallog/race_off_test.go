//go:build !race

package triallog

// raceDetector: this test binary runs under -race (see skipLogsUnderRace).
const raceDetector = false
