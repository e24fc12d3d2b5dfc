package libpath

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCandidates(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"libfoo.so.12", "libfoo.so.13.1.0", "libfoo.so.x", "libbar.so.14"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := Dirs
	Dirs = []string{dir, dir} // a folder listed twice yields each file once
	defer func() { Dirs = old }()

	for _, c := range []struct {
		name, env string
		want      []string
	}{
		{"newest file first, then sonames, then extras", "", []string{
			filepath.Join(dir, "libfoo.so.13.1.0"), filepath.Join(dir, "libfoo.so.12"),
			"libfoo.so.13", "libfoo.so.12", "libfoo.so"}},
		{"the variable wins alone", "/opt/x/libfoo.so.99", []string{"/opt/x/libfoo.so.99"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SYMMTUNE_TEST_FOO", c.env)
			if got := Candidates("SYMMTUNE_TEST_FOO", "libfoo", 12, 13, "libfoo.so"); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Candidates = %v\nwant %v", got, c.want)
			}
		})
	}
}
