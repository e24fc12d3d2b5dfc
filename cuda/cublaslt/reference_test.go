//go:build cuda

package cublaslt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/symmtune/symmtune/cuda/e4m3"
)

// The host side of the GPU test: operands, scales and a float64 reference.
// It lives here, without the gpu tag, so that CI checks the reference can
// tell a right product from a wrong one.

// problem is a product's host operands, dequantized, and its reference.
type problem struct {
	m              Matmul // normalized
	a, b           []float64
	scaleA, scaleB []float32 // one each, or M and N
	ref            []float64 // D, float64, laid out as D is
}

// extent is how many elements of A, B and D a normalized m spans.
func extent(m Matmul) (a, b, d int) {
	last := int64(m.Batch - 1)
	a = int(last*m.StrideA) + m.M*m.LDA
	if m.BT {
		b = m.N * m.LDB
	} else {
		b = m.K * m.LDB
	}
	d = int(last*m.StrideD) + m.M*m.LDD
	return
}

// at is B's element (k, j) in its stored layout.
func (p *problem) bAt(k, j int) float64 {
	if p.m.BT {
		return p.b[j*p.m.LDB+k]
	}
	return p.b[k*p.m.LDB+j]
}

// reference fills p.ref: D[i,j] = scaleA·scaleB·Σ A[i,k]·B[k,j] in float64.
func (p *problem) reference() {
	m := p.m
	_, _, nd := extent(m)
	p.ref = make([]float64, nd)
	for bt := 0; bt < m.Batch; bt++ {
		for i := 0; i < m.M; i++ {
			row := p.a[int64(bt)*m.StrideA+int64(i*m.LDA):]
			for j := 0; j < m.N; j++ {
				var s float64
				for k := 0; k < m.K; k++ {
					s += row[k] * p.bAt(k, j)
				}
				switch m.Scaling {
				case TensorScales:
					s *= float64(p.scaleA[0]) * float64(p.scaleB[0])
				case RowScales:
					s *= float64(p.scaleA[i]) * float64(p.scaleB[j])
				}
				p.ref[int64(bt)*m.StrideD+int64(i*m.LDD+j)] = s
			}
		}
	}
}

// relErr is the relative RMS error of the bf16 D against p.ref over the
// products' elements, and how many of them are NaN or infinite.
func (p *problem) relErr(d []uint16) (float64, int) {
	m := p.m
	var num, den float64
	bad := 0
	for bt := 0; bt < m.Batch; bt++ {
		for i := 0; i < m.M; i++ {
			for j := 0; j < m.N; j++ {
				o := int64(bt)*m.StrideD + int64(i*m.LDD+j)
				v := bf16Decode(d[o])
				if math.IsNaN(v) || math.IsInf(v, 0) {
					bad++
					continue
				}
				num += (v - p.ref[o]) * (v - p.ref[o])
				den += p.ref[o] * p.ref[o]
			}
		}
	}
	return math.Sqrt(num / den), bad
}

// scale is a dequantization scale in [2^-9, 2^-8), as docs/fp8.md's
// generator makes them.
func scale(r *rand.Rand) float32 { return float32(0x1p-9 * (1 + r.Float64())) }

// e4m3Operand is n e4m3 values spread over e4m3's whole range: 448·u
// (u uniform in [-1, 1)) scaled down by a random power of two up to 2^-15,
// so that every exponent, subnormals included, appears.
func e4m3Operand(r *rand.Rand, n int) (q []byte, v []float64) {
	q, v = make([]byte, n), make([]float64, n)
	for i := range q {
		q[i] = e4m3.Encode(float32(math.Ldexp((2*r.Float64()-1)*e4m3.Max, -r.IntN(16))))
		v[i] = float64(e4m3.Value(q[i]))
	}
	return q, v
}

// hostFP8 makes m's e4m3 operands (qa, qb) and fp32 scales, and the
// reference of the product they give.
func hostFP8(m Matmul, seed uint64) (p *problem, qa, qb []byte, err error) {
	if m, err = m.normalize(); err != nil {
		return nil, nil, nil, err
	}
	r := rand.New(rand.NewPCG(seed, 30))
	na, nb, _ := extent(m)
	p = &problem{m: m}
	qa, p.a = e4m3Operand(r, na)
	qb, p.b = e4m3Operand(r, nb)
	rowsA, rowsB := 1, 1
	if m.Scaling == RowScales {
		rowsA, rowsB = m.M, m.N
	}
	for i := 0; i < rowsA; i++ {
		p.scaleA = append(p.scaleA, scale(r))
	}
	for i := 0; i < rowsB; i++ {
		p.scaleB = append(p.scaleB, scale(r))
	}
	p.reference()
	return p, qa, qb, nil
}

// TestReference checks the GPU test's yardstick on the host: D rounded to
// bf16 passes, and the mistakes a binding could make (scales swapped
// between A and B, B read in the other layout, one product of a batch
// missing, a NaN) fail.
func TestReference(t *testing.T) {
	for _, m := range []Matmul{
		{M: 32, N: 48, K: 64, DType: E4M3, Out: BF16, Scaling: RowScales, BT: true},
		{M: 32, N: 48, K: 64, DType: E4M3, Out: BF16, Scaling: TensorScales, BT: false},
		{M: 16, N: 32, K: 64, DType: E4M3, Out: BF16, Scaling: TensorScales, BT: true, Batch: 3, StrideA: 16*64 + 16, StrideD: 16*32 + 8},
	} {
		p, _, _, err := hostFP8(m, 1)
		if err != nil {
			t.Fatal(err)
		}
		asBF16 := func(ref []float64) []uint16 {
			d := make([]uint16, len(ref))
			for i, v := range ref {
				d[i] = bf16Encode(float32(v))
			}
			return d
		}
		if e, bad := p.relErr(asBF16(p.ref)); bad != 0 || e > 4e-3 {
			t.Errorf("%s: the reference rounded to bf16 has error %.3g, %d NaN", p.m, e, bad)
		}
		wrong := map[string]*problem{}
		if m.Scaling == RowScales {
			// Each operand gets scales from the other's vector.
			q := *p
			both := append(append([]float32(nil), p.scaleB...), p.scaleA...)
			q.scaleA, q.scaleB = both[:m.M], both[len(both)-m.N:]
			wrong["scales swapped"] = &q
		}
		q := *p // the packed B read as [K,N] instead of [N,K] or back
		q.m.BT = !p.m.BT
		q.m.LDB = m.N
		if q.m.BT {
			q.m.LDB = m.K
		}
		wrong["B in the other layout"] = &q
		for what, w := range wrong {
			w.reference()
			if e, _ := p.relErr(asBF16(w.ref)); e < 0.1 {
				t.Errorf("%s: %s gives error %.3g, which passes", p.m, what, e)
			}
		}
		d := asBF16(p.ref)
		if m.Batch > 1 {
			lost := append([]uint16(nil), d...)
			for i := int64(0); i < int64(m.M*m.N); i++ {
				lost[p.m.StrideD+i] = 0
			}
			if e, _ := p.relErr(lost); e < 0.1 {
				t.Errorf("%s: a missing product gives error %.3g", p.m, e)
			}
		}
		d[len(d)-1] = 0x7fc0
		if _, bad := p.relErr(d); bad != 1 {
			t.Errorf("%s: a NaN counted %d times", p.m, bad)
		}
	}
}
