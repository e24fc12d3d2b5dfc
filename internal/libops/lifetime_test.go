package libops

import (
	"encoding/json"
	"errors"
	"testing"
)

// capturingStreams makes the streams in set the ones being captured.
func capturingStreams(t *testing.T, set ...uint64) {
	t.Helper()
	old := streamCapturing
	streamCapturing = func(s uint64) (bool, error) {
		for _, c := range set {
			if s == c {
				return true, nil
			}
		}
		return false, nil
	}
	t.Cleanup(func() { streamCapturing = old })
}

func TestRetireKeepsWhatAGraphHolds(t *testing.T) {
	const eager, captured = 1, 2
	capturingStreams(t, captured)
	cases := []struct {
		name    string
		streams []uint64 // the runner's calls
		kept    bool
	}{
		{"never called", nil, false},
		{"eager calls only", []uint64{eager, eager}, false},
		{"one call in a capture", []uint64{captured}, true},
		{"captured, then eager", []uint64{captured, eager, eager}, true},
		{"eager, then captured", []uint64{eager, captured}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, f := openFake(t, "bf16")
			for _, s := range c.streams {
				if err := GemmEnqueue(h, s, 1, 2, 3, 0); err != nil {
					t.Fatal(err)
				}
			}
			ans, err := Retire([]uint64{h})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(ans.Kept) == 1; got != c.kept {
				t.Fatalf("kept %v, want %v (answer %+v)", got, c.kept, ans)
			}
			if want := map[bool]int{true: 0, false: 1}[c.kept]; f.closes != want {
				t.Errorf("closed %d times, want %d", f.closes, want)
			}
			_, err = liveHandle(h)
			if open := err == nil; open != c.kept {
				t.Errorf("handle open %v, want %v", open, c.kept)
			}
		})
	}
}

func TestRetiredRunnerRefusesCalls(t *testing.T) {
	capturingStreams(t, 7)
	h, f := openFake(t, "bf16")
	if err := GemmEnqueue(h, 7, 1, 2, 3, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Retire([]uint64{h}); err != nil {
		t.Fatal(err)
	}
	var b *BadInputError
	if err := GemmEnqueue(h, 1, 1, 2, 3, 0); !errors.As(err, &b) {
		t.Fatalf("enqueue on a retired runner: %v, want bad input", err)
	}
	if len(f.calls) != 1 {
		t.Errorf("%d calls reached the runner, want 1", len(f.calls))
	}
	if s := Stats(); s.Retired < 1 || s.Runners < 1 {
		t.Errorf("stats %+v: want the kept runner counted as open and retired", s)
	}
	// An explicit close (the caller knows no graph remains) still frees it.
	if err := GemmClose(h); err != nil || f.closes != 1 {
		t.Errorf("close: %v, %d closes", err, f.closes)
	}
}

func TestRetireOp(t *testing.T) {
	capturingStreams(t, 9)
	held, _ := openFake(t, "bf16")
	free, _ := openFake(t, "bf16")
	if err := GemmEnqueue(held, 9, 1, 2, 3, 0); err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string][]uint64{"handles": {held, free}})
	out, err := Call("runtime.retire", req)
	if err != nil {
		t.Fatal(err)
	}
	var ans RetireAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Kept) != 1 || ans.Kept[0] != held || len(ans.Closed) != 1 || ans.Closed[0] != free {
		t.Errorf("answer %s: want kept [%d], closed [%d]", out, held, free)
	}
	var b *BadInputError
	if _, err := Call("runtime.retire", []byte(`{"handles":[123456789]}`)); !errors.As(err, &b) {
		t.Errorf("unknown handle: %v, want bad input", err)
	}
}

// fakeAR is an all-reduce runner that says itself whether a graph may
// hold it (as allreduce.Runner.MayBeCaptured does).
type fakeAR struct {
	held   bool
	closes int
}

func (f *fakeAR) enqueue(uint64, uint64, int64) error { return nil }
func (f *fakeAR) captured() bool                      { return f.held }
func (f *fakeAR) close() error                        { f.closes++; return nil }

func TestRetireAsksTheAllreduceRunner(t *testing.T) {
	for _, held := range []bool{false, true} {
		f := &fakeAR{held: held}
		runnersMu.Lock()
		nextHandle++
		h := nextHandle
		runners[h] = &liveRunner{r: arRunner{f}}
		runnersMu.Unlock()
		t.Cleanup(func() { _ = GemmClose(h) })
		if err := AllreduceEnqueue(h, 1, 16, 8); err != nil {
			t.Fatal(err)
		}
		ans, err := Retire([]uint64{h})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(ans.Kept) == 1; kept != held || f.closes != map[bool]int{true: 0, false: 1}[held] {
			t.Errorf("held %v: answer %+v, %d closes", held, ans, f.closes)
		}
		var b *BadInputError
		if err := AllreduceEnqueue(h, 1, 16, 8); !errors.As(err, &b) {
			t.Errorf("held %v: enqueue after retire: %v, want bad input", held, err)
		}
	}
}
