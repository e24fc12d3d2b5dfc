//go:build !race

package gpu

// raceDetector: this test binary runs under -race (see skipEnumerationUnderRace).
const raceDetector = false
