package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/transfer"
)

// TestHardLinksAfterSpill imports an archive whose hard links name files
// written before the set of written names spilled to disk: they link, and
// a link to a name never written is still refused.
func TestHardLinksAfterSpill(t *testing.T) {
	t.Cleanup(transfer.SetNameSetMemory(2))
	ctx := context.Background()
	var hs []*tar.Header
	for i := range 10 {
		hs = append(hs, &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("f%d", i), Size: int64(len(fmt.Sprint(i))), Mode: 0o644})
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, h := range hs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(tw, i)
	}
	for _, target := range []string{"f0", "f9", "f4"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "link-" + target, Linkname: target}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	_, ws := newWorkspace(t)
	f := ws.FS
	if err := transfer.ImportTar(ctx, f, ".", bytes.NewReader(buf.Bytes()), transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"f0", "f9", "f4"} {
		got, err := f.ReadFile(ctx, "link-"+target)
		if want := target[1:]; err != nil || string(got) != want {
			t.Errorf("link-%s reads %q, %v; want %q", target, got, err, want)
		}
	}
	tw = tar.NewWriter(&buf)
	buf.Reset()
	for _, h := range append(hs, &tar.Header{Typeflag: tar.TypeLink, Name: "bad", Linkname: "f10"}) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			fmt.Fprint(tw, h.Name[1:])
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := transfer.ImportTar(ctx, f, "again", bytes.NewReader(buf.Bytes()), transfer.Options{}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("hard link to a name never written: %v, want fs.ErrInvalid", err)
	}
}
