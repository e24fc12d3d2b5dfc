package srchash

import "testing"

func TestAsMain(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"package allreduce\n\nimport \"fmt\"\n", "package main\n\nimport \"fmt\"\n"},
		{"package main\n", "package main\n"},
		{"package agmm\n// package x\n", "package main\n// package x\n"},
	} {
		if got := string(AsMain([]byte(c.in))); got != c.want {
			t.Errorf("AsMain(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "// doc\npackage agmm\n", "package agmm"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AsMain(%q) did not panic", bad)
				}
			}()
			AsMain([]byte(bad))
		}()
	}
}
