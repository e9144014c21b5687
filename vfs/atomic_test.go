package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestRefusedStreamKeepsOldContent is issue 16's library reproduction: a
// handle opened with O_TRUNC over a 60,000-byte file gets four 32 KiB
// writes under a 100,000-byte quota. The fourth is refused, Close fails,
// and the old bytes stay, also after a reopen.
func TestRefusedStreamKeepsOldContent(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 100_000}})
	f := e.open(e.ws)
	old := randBytes(1, 60_000)
	must(t, f.WriteFile(ctx, "f", old, 0o644))
	h, err := f.OpenFile(ctx, "f", vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	must(t, err)
	chunk := randBytes(2, 32<<10)
	for i := range 4 {
		_, err := h.Write(chunk)
		if i < 3 {
			must(t, err)
			continue
		}
		vfstest.IsPathErr(t, err, errdefs.ErrQuota)
	}
	_, err = h.Write(chunk)
	vfstest.IsPathErr(t, err, errdefs.ErrQuota) // poisoned
	vfstest.IsPathErr(t, h.Sync(), errdefs.ErrQuota)
	vfstest.IsPathErr(t, h.Close(), errdefs.ErrQuota)
	check := func(f *vfs.FS) {
		got, err := f.ReadFile(ctx, "f")
		must(t, err)
		if !bytes.Equal(got, old) {
			t.Fatalf("file holds %d bytes, not the old %d", len(got), len(old))
		}
		u, err := f.Usage(ctx)
		must(t, err)
		if u.Bytes != int64(len(old)) {
			t.Fatalf("usage %+v", u)
		}
	}
	check(f)
	check(e.reopen(f))
}

// TestWriteFileFromAtomic: a streamed whole-file write replaces the file
// or changes nothing, and a refused new file is not created.
func TestWriteFileFromAtomic(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 100_000}})
	f := e.open(e.ws)
	old := randBytes(3, 60_000)
	must(t, f.WriteFile(ctx, "f", old, 0o644))
	before := vfstest.Dump(t, f)

	// Past the quota, into an existing file and as a new file (issue 10:
	// no empty file left behind).
	_, err := f.WriteFileFrom(ctx, "f", bytes.NewReader(randBytes(4, 120_000)), 0o644)
	vfstest.IsPathErr(t, err, errdefs.ErrQuota)
	_, err = f.WriteFileFrom(ctx, "big.bin", bytes.NewReader(randBytes(5, 50_000)), 0o644)
	vfstest.IsPathErr(t, err, errdefs.ErrQuota)
	// A reader that fails midway.
	boom := errors.New("boom")
	_, err = f.WriteFileFrom(ctx, "f", io.MultiReader(bytes.NewReader(make([]byte, 1000)), errReader{boom}), 0o644)
	if !errors.Is(err, boom) {
		t.Fatalf("reader failure: %v", err)
	}
	_, err = f.WriteFileFrom(ctx, "new", io.MultiReader(bytes.NewReader(make([]byte, 1000)), errReader{boom}), 0o644)
	if !errors.Is(err, boom) {
		t.Fatalf("reader failure: %v", err)
	}
	// A reader cut short (an HTTP body whose connection broke between two
	// chunks says io.ErrUnexpectedEOF) is a failure too, not the end of
	// the file: io.ReadFull reports a clean short end the same way, and
	// the bytes up to the cut used to be committed.
	_, err = f.WriteFileFrom(ctx, "f", io.MultiReader(bytes.NewReader(make([]byte, 1000)), errReader{io.ErrUnexpectedEOF}), 0o644)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reader cut short: %v", err)
	}
	vfstest.Equal(t, before, vfstest.Dump(t, f))

	// A directory is refused before the stream is read.
	must(t, f.Mkdir(ctx, "dir", 0o755))
	before = vfstest.Dump(t, f)
	r := bytes.NewReader(make([]byte, 10))
	_, err = f.WriteFileFrom(ctx, "dir", r, 0o644)
	vfstest.IsPathErr(t, err, errdefs.ErrIsDir)
	if r.Len() != 10 {
		t.Fatalf("read %d bytes for a directory", 10-r.Len())
	}
	vfstest.Equal(t, before, vfstest.Dump(t, f))

	// Within the room: replaced entirely (the old size counts as room).
	next := randBytes(6, 99_000)
	n, err := f.WriteFileFrom(ctx, "f", bytes.NewReader(next), 0o600)
	must(t, err)
	if n != int64(len(next)) {
		t.Fatalf("wrote %d", n)
	}
	got, err := f.ReadFile(ctx, "f")
	must(t, err)
	if !bytes.Equal(got, next) {
		t.Fatal("contents differ")
	}
}

// TestWriteFileFromCommitsAhead: a long stream is chunked and stored
// while it is read (not spilled to a file read back at the end), the file
// is all of it, and a stream that fails after chunks were stored (the
// reader, the quota, a cancelled context) changes nothing and leaves no
// upload intent held.
func TestWriteFileFromCommitsAhead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 40 << 20}})
	f := e.open(e.ws)
	old := randBytes(7, 60_000)
	must(t, f.WriteFile(ctx, "f", old, 0o644))
	data := randBytes(8, 48<<20)
	held := func() int { return pendingIntents(t, ctx, e) }

	heldAtEnd := -1
	atEnd := readerFunc(func([]byte) (int, error) {
		heldAtEnd = held()
		return 0, io.EOF
	})
	n, err := f.WriteFileFrom(ctx, "g", io.MultiReader(bytes.NewReader(data[:36<<20]), atEnd), 0o644)
	must(t, err)
	if n != 36<<20 || heldAtEnd == 0 {
		t.Fatalf("read %d bytes; %d intents held when the stream ended (none: nothing was committed ahead)", n, heldAtEnd)
	}
	got, err := f.ReadFile(ctx, "g")
	must(t, err)
	if !bytes.Equal(got, data[:36<<20]) {
		t.Fatalf("file holds %d bytes, want the 36 MiB streamed", len(got))
	}
	must(t, f.Remove(ctx, "g"))
	if n := held(); n != 0 {
		t.Fatalf("%d upload intents held after the write", n)
	}

	before := vfstest.Dump(t, f)
	boom := errors.New("boom")
	_, err = f.WriteFileFrom(ctx, "f", io.MultiReader(bytes.NewReader(data[:36<<20]), errReader{boom}), 0o644)
	if !errors.Is(err, boom) {
		t.Fatalf("reader failure: %v", err)
	}
	_, err = f.WriteFileFrom(ctx, "f", bytes.NewReader(data), 0o644)
	vfstest.IsPathErr(t, err, errdefs.ErrQuota)
	// Cancelled while a commit ahead runs beside the reading.
	cctx, cancel := context.WithCancel(ctx)
	cancelAt := readerFunc(func([]byte) (int, error) {
		cancel()
		return 0, io.EOF // on to the next reader
	})
	_, err = f.WriteFileFrom(cctx, "f", io.MultiReader(bytes.NewReader(data[:20<<20]), cancelAt, bytes.NewReader(data[20<<20:30<<20])), 0o644)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
	vfstest.Equal(t, before, vfstest.Dump(t, f))
	if n := held(); n != 0 {
		t.Fatalf("%d upload intents held after failed writes", n)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestHandleQuotaModel runs random write sequences on one handle under a
// byte quota against a model of the committed and buffered contents.
// Whatever the sequence, the file only ever holds a committed state: after
// a refused write the handle is poisoned and the file keeps its old
// contents; a successful Close leaves exactly the buffered contents.
func TestHandleQuotaModel(t *testing.T) {
	ctx := context.Background()
	const quota = 64 << 10
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: quota}})
	f := e.open(e.ws)
	rapid.Check(t, func(rt *rapid.T) {
		other := rapid.IntRange(0, quota/2).Draw(rt, "other")
		must(rt, f.WriteFile(ctx, "f", nil, 0o644))
		must(rt, f.WriteFile(ctx, "other", make([]byte, other), 0o644))
		committed := randBytes(rapid.Uint64().Draw(rt, "seed"), rapid.IntRange(0, quota-other).Draw(rt, "old"))
		must(rt, f.WriteFile(ctx, "f", committed, 0o644))
		flag := vfs.O_RDWR
		if rapid.Bool().Draw(rt, "trunc") {
			flag |= vfs.O_TRUNC
		}
		appendMode := rapid.Bool().Draw(rt, "append")
		if appendMode {
			flag |= vfs.O_APPEND
		}
		h, err := f.OpenFile(ctx, "f", flag, 0)
		must(rt, err)
		buf := bytes.Clone(committed)
		if flag&vfs.O_TRUNC != 0 {
			buf = nil
		}
		var poisoned bool
		var off int64
		fits := func(size int) bool { return other+size <= quota }
		// onDisk checks the file holds the committed contents.
		onDisk := func() {
			got, err := f.ReadFile(ctx, "f")
			must(rt, err)
			if !bytes.Equal(got, committed) {
				rt.Fatalf("file holds %d bytes, committed %d", len(got), len(committed))
			}
		}
		// outcome checks err: a refusal when the handle is poisoned or
		// the new size does not fit, success (then apply runs) otherwise.
		outcome := func(err error, grows bool, size int, apply func()) {
			if poisoned || (grows && !fits(size)) {
				isQuota(rt, err)
				poisoned = true
				return
			}
			must(rt, err)
			apply()
		}
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for range steps {
			switch op := rapid.IntRange(0, 3).Draw(rt, "op"); {
			case op <= 1: // Write, or WriteAt when not appending
				n := rapid.IntRange(0, quota/3).Draw(rt, "n")
				p := randBytes(uint64(n), n)
				var err error
				at := off
				switch {
				case appendMode:
					at = int64(len(buf))
					_, err = h.Write(p)
				case op == 0:
					_, err = h.Write(p)
				default:
					at = rapid.Int64Range(0, quota).Draw(rt, "at")
					_, err = h.WriteAt(p, at)
				}
				outcome(err, n > 0, max(len(buf), int(at)+n), func() {
					if n > 0 {
						buf = writeAt(buf, p, at)
					}
					if op == 0 || appendMode {
						off = at + int64(n)
					}
				})
			case op == 2: // Truncate
				size := rapid.IntRange(0, quota).Draw(rt, "size")
				outcome(h.Truncate(int64(size)), true, size, func() { buf = resize(buf, size) })
			default: // Sync
				outcome(h.Sync(), false, 0, func() { committed = bytes.Clone(buf) })
			}
			onDisk()
		}
		err = h.Close()
		if poisoned {
			isQuota(rt, err)
		} else {
			must(rt, err)
			committed = buf
		}
		onDisk()
	})
}

// writeAt is the model of a write: p at off, zero-filling a gap.
func writeAt(buf, p []byte, off int64) []byte {
	if end := int(off) + len(p); end > len(buf) {
		buf = resize(buf, end)
	}
	copy(buf[off:], p)
	return buf
}

func resize(buf []byte, size int) []byte {
	if size <= len(buf) {
		return buf[:size:size]
	}
	return append(buf, make([]byte, size-len(buf))...)
}

func isQuota(t fataler, err error) {
	t.Helper()
	if !errors.Is(err, errdefs.ErrQuota) {
		t.Fatal("want a quota error, got ", err)
	}
}

// TestCommitAhead: a handle that writes more than it buffers commits the
// bytes to the content store as it goes (chunks put, nothing recorded):
// reads through the handle see them, other readers see the old file
// until Close, and a later refused write (quota) still leaves the old
// bytes and releases every chunk's upload intent.
func TestCommitAhead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 40 << 20}})
	f := e.open(e.ws)
	old := randBytes(5, 60_000)
	must(t, f.WriteFile(ctx, "f", old, 0o644))
	data := randBytes(6, 48<<20)

	write := func(h *vfs.File, n int) error {
		for off := 0; off < n; off += 1 << 20 {
			if _, err := h.Write(data[off : off+1<<20]); err != nil {
				return err
			}
		}
		return nil
	}
	// Kept: 36 MiB, two commits ahead and a rest.
	h, err := f.OpenFile(ctx, "g", vfs.O_RDWR|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	must(t, err)
	must(t, write(h, 36<<20))
	buf := make([]byte, 1<<20)
	_, err = h.ReadAt(buf, 20<<20)
	must(t, err)
	if !bytes.Equal(buf, data[20<<20:21<<20]) {
		t.Fatal("the handle does not read back what it wrote ahead")
	}
	held := 0
	must(t, e.deps.Meta.View(ctx, func(tx meta.Tx) error {
		return tx.Intents(func(in meta.Intent) error {
			if !in.Released {
				held++
			}
			return nil
		})
	}))
	if held == 0 {
		t.Fatal("36 MiB written and no chunk put yet: nothing was committed ahead")
	}
	if fi, err := f.Stat(ctx, "g"); err != nil || fi.Size() != 0 {
		t.Fatalf("another reader sees %v before Close (%v)", fi, err)
	}
	must(t, h.Close())
	got, err := f.ReadFile(ctx, "g")
	must(t, err)
	if !bytes.Equal(got, data[:36<<20]) {
		t.Fatalf("file holds %d bytes, want the 36 MiB written", len(got))
	}
	must(t, f.Remove(ctx, "g"))

	// Refused: the quota stops the rewrite of f past 40 MiB, after two
	// commits ahead.
	h, err = f.OpenFile(ctx, "f", vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
	must(t, err)
	vfstest.IsPathErr(t, write(h, 48<<20), errdefs.ErrQuota)
	vfstest.IsPathErr(t, h.Close(), errdefs.ErrQuota)
	got, err = f.ReadFile(ctx, "f")
	must(t, err)
	if !bytes.Equal(got, old) {
		t.Fatalf("file holds %d bytes, not the old %d", len(got), len(old))
	}
	must(t, e.deps.Meta.View(ctx, func(tx meta.Tx) error {
		return tx.Intents(func(in meta.Intent) error {
			if !in.Released {
				t.Errorf("upload intent %d on %s still held", in.ID, in.Hash.Short())
			}
			return nil
		})
	}))
}

// pendingIntents counts the upload intents of e's store not released yet.
func pendingIntents(t *testing.T, ctx context.Context, e *env) int {
	t.Helper()
	n := 0
	must(t, e.deps.Meta.View(ctx, func(tx meta.Tx) error {
		return tx.Intents(func(in meta.Intent) error {
			if !in.Released {
				n++
			}
			return nil
		})
	}))
	return n
}
