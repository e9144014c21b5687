package chunk

import (
	"fmt"
	"io/fs"
	"math/bits"
)

// Params are the content-defined chunking parameters. They are part of the
// on-disk format: a store records the Params it was created with and always
// chunks with them, so identical bytes always split into identical chunks.
type Params struct {
	MinSize int `json:"min_size"`
	AvgSize int `json:"avg_size"`
	MaxSize int `json:"max_size"`
}

// DefaultParams splits files into chunks of about 1 MiB.
var DefaultParams = Params{MinSize: 256 << 10, AvgSize: 1 << 20, MaxSize: 4 << 20}

// Limits on Params.
const (
	// SmallestSize is the smallest allowed MinSize.
	SmallestSize = 64
	// LargestSize is the largest allowed MaxSize.
	LargestSize = 1 << 30
)

// normalization is FastCDC's normalization level, pinned at the paper's
// recommended 2: before AvgSize a boundary needs normalization more zero bits of
// the rolling hash than log2(AvgSize), after it that many fewer.
const normalization = 2

// Validate reports whether p can be used: SmallestSize <= MinSize < AvgSize <
// MaxSize <= LargestSize and AvgSize a power of two. The error wraps
// fs.ErrInvalid.
func (p Params) Validate() error {
	switch {
	case p.MinSize < SmallestSize:
		return fmt.Errorf("validate chunk params %+v: %w: min size below %d", p, fs.ErrInvalid, SmallestSize)
	case p.MaxSize > LargestSize:
		return fmt.Errorf("validate chunk params %+v: %w: max size above %d", p, fs.ErrInvalid, LargestSize)
	case !(p.MinSize < p.AvgSize && p.AvgSize < p.MaxSize):
		return fmt.Errorf("validate chunk params %+v: %w: want min < avg < max", p, fs.ErrInvalid)
	case bits.OnesCount(uint(p.AvgSize)) != 1:
		return fmt.Errorf("validate chunk params %+v: %w: avg size not a power of two", p, fs.ErrInvalid)
	}
	return nil
}

// masks returns the boundary masks used before (small) and after (large)
// AvgSize bytes of a chunk.
func (p Params) masks() (small, large uint64) {
	b := bits.Len(uint(p.AvgSize)) - 1
	return 1<<(b+normalization) - 1, 1<<(b-normalization) - 1
}
