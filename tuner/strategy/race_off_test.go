//go:build !race

package strategy

// raceDetector: this test binary runs under -race (see skipReplaysUnderRace).
const raceDetector = false
