// Package golden checks test values against JSON files in testdata/ that
// other implementations are held to as well (the Python package's tests
// read the same files), and rewrites them when a test runs with -update.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/ from the Go implementation")

// JSON compares got, as indented JSON, with the file at path, after
// writing it there first when the test runs with -update.
func JSON(t testing.TB, path string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s no longer holds what the Go code computes; if the change is meant, rerun the test with -update", path)
	}
}
