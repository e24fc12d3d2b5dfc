package gemm

import "fmt"

// Mat is a row-major f32 matrix view: element (i, j) is Data[i*Stride+j].
// Views of views share Data, so a tile of a larger matrix (or of a peer's
// symmetric buffer) is a Mat without copying.
type Mat struct {
	Data       []float32
	Rows, Cols int
	Stride     int
}

// NewMat views data as a rows × cols matrix with no padding.
func NewMat(data []float32, rows, cols int) Mat {
	if len(data) < rows*cols {
		panic(fmt.Sprintf("gemm.NewMat: %d elements for %d×%d", len(data), rows, cols))
	}
	return Mat{Data: data[:rows*cols], Rows: rows, Cols: cols, Stride: cols}
}

// Sub is the h × w view starting at (r, c).
func (m Mat) Sub(r, c, h, w int) Mat {
	if r < 0 || c < 0 || h < 0 || w < 0 || r+h > m.Rows || c+w > m.Cols {
		panic(fmt.Sprintf("gemm.Mat.Sub(%d,%d,%d,%d) of %d×%d", r, c, h, w, m.Rows, m.Cols))
	}
	if h == 0 || w == 0 {
		return Mat{Rows: h, Cols: w, Stride: m.Stride}
	}
	off := r*m.Stride + c
	return Mat{Data: m.Data[off : off+(h-1)*m.Stride+w], Rows: h, Cols: w, Stride: m.Stride}
}

// Row is row i of the view.
func (m Mat) Row(i int) []float32 {
	off := i * m.Stride
	return m.Data[off : off+m.Cols : off+m.Cols]
}

// MulTile sets dst = a · b for one output tile: dst is h × w, a is h × K
// and b is K × w (views into the full A and B). The K loop is blocked by bk
// so the b panel of bk × w stays in cache while all h rows of a use it, the
// CPU analogue of staging a block_k slab in shared memory. It accumulates
// in acc (at least h*w floats, reused across calls) and writes dst once, so
// a tile that lives in symmetric memory is stored exactly once per call.
func MulTile(dst, a, b Mat, bk int, acc []float32) {
	h, w, k := dst.Rows, dst.Cols, a.Cols
	if a.Rows != h || b.Rows != k || b.Cols != w || bk < 1 || len(acc) < h*w {
		panic(fmt.Sprintf("gemm.MulTile: dst %d×%d, a %d×%d, b %d×%d, bk %d, acc %d",
			h, w, a.Rows, a.Cols, b.Rows, b.Cols, bk, len(acc)))
	}
	if h == 0 || w == 0 {
		return
	}
	acc = acc[:h*w]
	clear(acc)
	bs := b.Stride
	for k0 := 0; k0 < k; k0 += bk {
		k1 := min(k0+bk, k)
		for i := 0; i < h; i++ {
			arow := a.Row(i)
			crow := acc[i*w : i*w+w : i*w+w]
			kk := k0
			// Four k steps per pass over crow: a quarter of the loads and
			// stores of the accumulator row, which is what bounds this loop.
			for ; kk+4 <= k1; kk += 4 {
				a0, a1, a2, a3 := arow[kk], arow[kk+1], arow[kk+2], arow[kk+3]
				b0 := b.Data[kk*bs : kk*bs+w]
				b1 := b.Data[(kk+1)*bs : (kk+1)*bs+w]
				b2 := b.Data[(kk+2)*bs : (kk+2)*bs+w]
				b3 := b.Data[(kk+3)*bs : (kk+3)*bs+w]
				b0, b1, b2, b3 = b0[:len(crow)], b1[:len(crow)], b2[:len(crow)], b3[:len(crow)]
				for j := range crow {
					crow[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
				}
			}
			for ; kk < k1; kk++ {
				a0 := arow[kk]
				b0 := b.Data[kk*bs : kk*bs+w]
				b0 = b0[:len(crow)]
				for j := range crow {
					crow[j] += a0 * b0[j]
				}
			}
		}
	}
	for i := 0; i < h; i++ {
		copy(dst.Row(i), acc[i*w:i*w+w])
	}
}
