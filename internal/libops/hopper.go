package libops

import (
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// tileReq names a tile ({name}, ParseTile's form) or gives its fields
// ({tile}); SmemLimit is Check's limit (0: hopper.SmemLimit); M and N,
// when set, ask for Tiles(m, n).
type tileReq struct {
	Name      *string   `json:"name"`
	Tile      *tileJSON `json:"tile"`
	SmemLimit int       `json:"smem_limit"`
	M         int       `json:"m"`
	N         int       `json:"n"`
}

func hopperOps() map[string]op {
	return map[string]op{
		"hopper.tile": handler("a tile by {name} (ParseTile) or {tile} fields: its fields, canonical name, Check's verdict (null or the reason), smem bytes, epilogue buffers, threads, rows per tile, cluster_m, NVRTC options for bf16 and f16, and Tiles(m, n) when m and n are given",
			func(r tileReq) (any, error) {
				var t hopper.Tile
				switch {
				case r.Name != nil && r.Tile != nil:
					return nil, bad("tile: give name or tile, not both")
				case r.Name != nil:
					var err error
					if t, err = hopper.ParseTile(*r.Name); err != nil {
						return nil, badErr(err)
					}
				case r.Tile != nil:
					t = r.Tile.tile()
				default:
					return nil, bad("tile: want name or tile")
				}
				limit := r.SmemLimit
				if limit == 0 {
					limit = hopper.SmemLimit
				}
				var check *string
				if err := t.Check(limit); err != nil {
					s := err.Error()
					check = &s
				}
				out := map[string]any{
					"tile": tileOf(t), "name": t.String(), "check": check, "smem_bytes": t.SmemBytes(),
					"epi_buffers": t.EpiBuffers(), "threads": t.Threads(), "rows_per_tile": t.RowsPerTile(),
					"cluster_m": t.ClusterM(), "options": map[string][]string{"bf16": t.Options(hopper.Format16(true)), "f16": t.Options(hopper.Format16(false))},
				}
				if r.M != 0 || r.N != 0 {
					if r.M < 1 || r.N < 1 || t.BM < 1 || t.BN < 1 {
						return nil, bad("tiles of m=%d, n=%d in %dx%d tiles: want positive sizes", r.M, r.N, t.BM, t.BN)
					}
					out["tiles"] = t.Tiles(r.M, r.N)
				}
				return out, nil
			}),
		"hopper.check_shape": handler("CheckShape of {n, k}: {} or why the fused kernel cannot take the shape",
			func(r struct {
				N int `json:"n"`
				K int `json:"k"`
			}) (any, error) {
				return struct{}{}, badErr(hopper.Tile{}.CheckShape(r.N, r.K))
			}),
	}
}

// hopperConstants are kernels/gemm/hopper's data.
func hopperConstants() map[string]any {
	return map[string]any{
		"bk": hopper.BK, "smem_limit": hopper.SmemLimit, "stage_bytes": hopper.StageBytes,
		"max_epi_buffers": hopper.MaxEpiBuffers, "entry": hopper.Entry, "epilogue_option": hopper.EpilogueOption,
		"parts": hopper.Parts, "searched": hopper.Searched, "widths": hopper.Widths(),
		"block_m_values": hopper.BlockMValues, "block_n_values": hopper.BlockNValues, "stage_values": hopper.StageValues,
	}
}
