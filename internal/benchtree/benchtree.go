package benchtree

import (
	"archive/tar"
	"fmt"
	"io"
	"math/rand/v2"
)

// BlobEvery is how often a file of Tar is large: one in BlobEvery is of
// 64 KiB, the others of 1 KiB.
const BlobEvery = 50

// Tar returns a tar stream of 100 directories d0 … d99 and files files
// spread over them (d<i%100>/f<i>), file i holding Bytes(i, its size).
func Tar(files int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		pw.CloseWithError(func() error {
			for d := range 100 {
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("d%d/", d), Mode: 0o755}); err != nil {
					return err
				}
			}
			for i := range files {
				size := 1 << 10
				if i%BlobEvery == 0 {
					size = 64 << 10
				}
				hdr := &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("d%d/f%d", i%100, i), Mode: 0o644, Size: int64(size)}
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				if _, err := tw.Write(Bytes(uint64(i), size)); err != nil {
					return err
				}
			}
			return tw.Close()
		}())
	}()
	return pr
}

// Bytes returns n pseudo-random bytes from seed: the same for the same
// seed, different for another.
func Bytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
