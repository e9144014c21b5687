package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/transfer"
)

// benchArchive is a tar of n files of size bytes each in 10 directories.
func benchArchive(b *testing.B, n, size int) []byte {
	b.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range n {
		data := pattern(size, byte(i))
		h := &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("d%d/f%05d", i%10, i), Mode: 0o644, Size: int64(size)}
		if err := tw.WriteHeader(h); err != nil {
			b.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchStore(b *testing.B) *forkspace.Store {
	b.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: b.TempDir(), Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

var benchShapes = []struct {
	name    string
	n, size int
}{
	{"1000x1KiB", 1000, 1 << 10},
	{"10000x1KiB", 10000, 1 << 10},
	{"4x16MiB", 4, 16 << 20},
}

func BenchmarkImportTar(b *testing.B) {
	ctx := context.Background()
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			archive := benchArchive(b, sh.n, sh.size)
			st := benchStore(b)
			b.SetBytes(int64(sh.n * sh.size))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ws, err := st.Create(ctx, fmt.Sprint("w", i), forkspace.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				i++
				if err := transfer.ImportTar(ctx, ws.FS, ".", bytes.NewReader(archive), transfer.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExportTar(b *testing.B) {
	ctx := context.Background()
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			st := benchStore(b)
			ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := transfer.ImportTar(ctx, ws.FS, ".", bytes.NewReader(benchArchive(b, sh.n, sh.size)), transfer.Options{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(sh.n * sh.size))
			b.ReportAllocs()
			for b.Loop() {
				if err := transfer.ExportTar(ctx, ws.FS, ".", io.Discard, transfer.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
