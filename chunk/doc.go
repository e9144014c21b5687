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
//   - the 256-entry gear table of github.com/jotfs/fastcdc-go v0.2.0 with
//     Seed 0 (gear.go), and the rolling hash fp = fp<<1 + gear[b] started
//     fresh at MinSize bytes into each chunk.
//
// The output is identical, boundary for boundary, to fastcdc-go v0.2.0 with
// those options (TestMatchesFastCDC checks it). The algorithm is implemented
// here instead of calling the library because fastcdc-go's NewChunker
// rewrites its package-level table on every call (a data race with any
// concurrent chunker, reported by -race) and allocates a buffer of at least
// MaxSize per call, which a file store committing many small files cannot
// afford. Cut works on caller-owned memory and allocates nothing.
//
// # Use
//
// Split chunks an io.Reader; Params.Cut finds the next boundary in a byte
// slice that is either the rest of the input or at least MaxSize long.
package chunk
