// Package chunk splits byte streams into content-defined chunks with FastCDC
// (Xia et al., USENIX ATC '16) and names them with cas.Sum (BLAKE3).
//
// Chunk boundaries depend only on the bytes around them, so an edit moves
// the boundaries near it and no others: unchanged regions of a file, and
// identical regions of different files, split into identical chunks that
// the blob store keeps once.
//
// # On-disk format
//
// The chunker's output is part of the on-disk format. It is fixed by:
//   - Params (MinSize, AvgSize, MaxSize), recorded by each store at creation
//     and never changed afterwards;
//   - normalization level 2 (a boundary before AvgSize needs log2(AvgSize)+2
//     zero low bits of the rolling hash, after it log2(AvgSize)-2);
//   - the 256-entry gear table (gear.go: SplitMix64 from a fixed seed), and
//     the rolling hash fp = fp<<1 + gear[b] started fresh at MinSize bytes
//     into each chunk.
//
// TestFormatIsPinned records the boundaries of a fixed input, so any change
// to the format fails a test. The algorithm is implemented here rather than
// taken from a library (docs/decisions/006-fastcdc-in-house.md): the Go
// FastCDC library we evaluated, fastcdc-go v0.2.0, rewrites a package-level
// table on every NewChunker call (a data race with any concurrent chunker)
// and allocates MaxSize per call. Cut works on caller-owned memory and
// allocates nothing.
//
// # Use
//
// Split chunks an io.Reader; Params.Cut finds the next boundary in a byte
// slice that is either the rest of the input or at least MaxSize long.
package chunk
