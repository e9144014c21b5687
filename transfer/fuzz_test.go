package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/transfer"
)

// FuzzImportTar feeds arbitrary bytes to ImportTar and checks that nothing
// is ever written outside the target directory, whatever the archive
// holds or however it fails. Fuzz it with -fuzzminimizetime=0: a store's
// random tree seed and IDs make coverage differ between runs of one input,
// which stalls the fuzzer's minimization.
func FuzzImportTar(f *testing.F) {
	seed := func(hs ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hs {
			if h.Typeflag == tar.TypeReg {
				h.Size = 1
			}
			if err := tw.WriteHeader(h); err != nil {
				f.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				tw.Write([]byte("x"))
			}
		}
		tw.Close()
		return buf.Bytes()
	}
	f.Add(seed(&tar.Header{Typeflag: tar.TypeReg, Name: "a/b", Mode: 0o644}))
	f.Add(seed(&tar.Header{Typeflag: tar.TypeReg, Name: "../x", Mode: 0o644}))
	f.Add(seed(&tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: ".."}, &tar.Header{Typeflag: tar.TypeReg, Name: "l/x", Mode: 0o644}))
	f.Add(seed(&tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "/"}, &tar.Header{Typeflag: tar.TypeDir, Name: "l/d/", Mode: 0o755}))
	f.Add(seed(&tar.Header{Typeflag: tar.TypeLink, Name: "h", Linkname: "../outside"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0})

	f.Fuzz(func(t *testing.T, archive []byte) {
		importConfined(t, func(ctx context.Context, ws *forkspace.Workspace) error {
			return transfer.ImportTar(ctx, ws.FS, "target", bytes.NewReader(archive), transfer.Options{})
		})
	})
}

// FuzzImportZip is FuzzImportTar for zip archives.
func FuzzImportZip(f *testing.F) {
	f.Add(zipOf(f, zipEntry{name: "a/b", body: "x"}))
	f.Add(zipOf(f, zipEntry{name: "../x", body: "x"}))
	f.Add(zipOf(f, zipEntry{name: "/abs", body: "x"}))
	f.Add(zipOf(f, zipEntry{name: "l", body: "..", mode: fs.ModeSymlink | 0o777}, zipEntry{name: "l/x", body: "x"}))
	f.Add(zipOf(f, zipEntry{name: "l", body: "/", mode: fs.ModeSymlink | 0o777}, zipEntry{name: "l/d/", mode: fs.ModeDir | 0o755}))
	f.Add([]byte("PK\x05\x06"))
	f.Fuzz(func(t *testing.T, archive []byte) {
		importConfined(t, func(ctx context.Context, ws *forkspace.Workspace) error {
			return transfer.ImportZip(ctx, ws.FS, "target", bytes.NewReader(archive), int64(len(archive)), transfer.Options{})
		})
	})
}

// importConfined runs imp (an import into "target") on a fresh store —
// one per input keeps executions independent — and checks that nothing
// was written outside the target directory, whatever imp returned.
func importConfined(t *testing.T, imp func(context.Context, *forkspace.Workspace) error) {
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "outside", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = imp(ctx, ws)
	des, err := ws.ReadDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != "target" && de.Name() != "outside" {
			t.Fatalf("wrote %q outside the target", de.Name())
		}
	}
	if got, err := ws.ReadFile(ctx, "outside"); err != nil || string(got) != "keep" {
		t.Fatalf("outside file now %q, %v", got, err)
	}
}
