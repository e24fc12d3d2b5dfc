//go:build race

package tuner

// raceDetector: this test binary runs under -race (see TestSpaceOfMillions).
const raceDetector = true
