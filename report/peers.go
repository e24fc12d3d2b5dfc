package report

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// PeerFile is a CSV of peer timings and the world size it was measured at
// (0: read it from the file name, e.g. peers-w4.csv or peers-h200x4.csv).
type PeerFile struct {
	Path  string
	World int
}

// ParsePeerArg reads a --peers argument: FILE, or WORLD=FILE.
func ParsePeerArg(arg string) PeerFile {
	if w, path, ok := strings.Cut(arg, "="); ok {
		if n, err := strconv.Atoi(w); err == nil && n > 0 {
			return PeerFile{Path: path, World: n}
		}
	}
	return PeerFile{Path: arg}
}

// Peer is one peer timing: a library's implementation of what a symmtune
// kernel does, at one problem size.
type Peer struct {
	Kind, Impl, Shape string
	US                float64
	World             int
	Size              float64 // on the latency plots' x axis, as problemSize
}

// peerKernels maps peer_baselines.py's kinds to the symmtune kernels whose
// plots they are drawn on. "mm" is the matrix product alone, a floor for
// both fused kernels.
var peerKernels = map[string][]string{
	"allreduce": {"allreduce"},
	"mmrs":      {"matmulrs"},
	"agmm":      {"agmm"},
	"mm":        {"matmulrs", "agmm"},
}

// worldInName finds the world size in a peers file name: "-w4", or "x4"
// after a machine name ("-h200x4-"), not in a shape ("4096x1792").
var worldInName = regexp.MustCompile(`(?:^|[-_.])(?:w|[a-z]+\d*x)(\d+)(?:[-_.]|$)`)

// readPeers reads the peers files. Lines that are not kind,impl,shape,us
// rows (peer_baselines.py also prints its failures to stdout) are skipped
// and counted in a note; a file with no row at all is bad input.
func (d *Data) readPeers(files []PeerFile) error {
	worlds := map[int]bool{}
	for _, r := range d.Runs {
		worlds[r.World] = true
	}
	for _, e := range d.Entries {
		worlds[e.World] = true
	}
	for _, pf := range files {
		world := pf.World
		if world == 0 {
			if m := worldInName.FindStringSubmatch(strings.ToLower(filepath.Base(pf.Path))); m != nil {
				world, _ = strconv.Atoi(m[1])
			} else if len(worlds) == 1 {
				for w := range worlds {
					world = w
				}
			} else {
				return inputErrorf("peers file %s: %v from its name (peers-w4.csv); give it as --peers 4=%s", pf.Path, errNoWorld, pf.Path)
			}
		}
		peers, skipped, err := readPeerCSV(pf.Path, world)
		if err != nil {
			return err
		}
		if skipped > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("%s: %d lines that are not kind,impl,shape,us rows skipped", pf.Path, skipped))
		}
		if !worlds[world] {
			d.Notes = append(d.Notes, fmt.Sprintf("%s: no symmtune results at world size %d to compare with; not drawn", pf.Path, world))
		}
		d.Peers = append(d.Peers, peers...)
		d.Sources = append(d.Sources, fmt.Sprintf("peers %s (world %d, %d rows)", pf.Path, world, len(peers)))
	}
	return nil
}

func readPeerCSV(path string, world int) (peers []Peer, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, inputErrorf("peers file: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Split(line, ",")
		if line == "" || line == "kind,impl,shape,us" {
			continue
		}
		us, perr := strconv.ParseFloat(strings.TrimSpace(safeField(fields, 3)), 64)
		if len(fields) != 4 || perr != nil || !finite(us) {
			skipped++
			continue
		}
		p := Peer{Kind: fields[0], Impl: fields[1], Shape: fields[2], US: us, World: world}
		if p.Size, err = peerSize(p.Shape); err != nil {
			return nil, 0, inputErrorf("peers file %s: line %d: %v", path, n, err)
		}
		peers = append(peers, p)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("read peers file %s: %w", path, err)
	}
	if len(peers) == 0 {
		return nil, 0, inputErrorf("peers file %s: not a peers CSV: no kind,impl,shape,us rows", path)
	}
	return peers, skipped, nil
}

func safeField(fields []string, i int) string {
	if i < len(fields) {
		return fields[i]
	}
	return ""
}

// peerSize puts a peer shape on symmtune's x axis: all-reduce shapes are
// message bytes, matmul shapes MxNxK (their product, as problemSize).
func peerSize(shape string) (float64, error) {
	p := 1.0
	for _, part := range strings.Split(shape, "x") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("shape %q is neither a byte count nor MxNxK", shape)
		}
		p *= float64(n)
	}
	return p, nil
}
