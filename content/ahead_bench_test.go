package content_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/content"
)

// discardBlobs is a blob store whose puts store nothing: what a write
// costs before the blob store.
type discardBlobs struct{ *memblob.Store }

func (discardBlobs) Put(context.Context, cas.Hash, []byte) error { return nil }

// BenchmarkCommitAheadPipeline writes 256 MiB through a draft in 1 MiB
// pieces as a vfs handle does, committing ahead every 16 MiB in the
// background (StartAhead), then commits it, over a blob store that
// keeps nothing: the CPU of copying, cutting and hashing alone
// (cpu-s/op: user and system time of the process).
func BenchmarkCommitAheadPipeline(b *testing.B) {
	const size = 256 << 20
	s := content.New(content.Options{Blobs: discardBlobs{memblob.New()}, Meta: newFakeMeta()})
	data := randomBytes(1, size)
	b.SetBytes(size)
	var cpu time.Duration
	round := byte(0)
	for b.Loop() {
		b.StopTimer()
		round++
		for i := 0; i < size; i += 4 << 10 {
			data[i] = round
		}
		start := rusage()
		b.StartTimer()
		d := s.NewDraft(content.Manifest{})
		var held content.Intents
		for off := 0; off < size; off += 1 << 20 {
			if _, err := d.WriteAt(data[off:off+1<<20], int64(off)); err != nil {
				b.Fatal(err)
			}
			if d.BufferedSinceCommit() >= 16<<20 {
				in, err := d.StartAhead(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				held = append(held, in...)
			}
		}
		_, _, in, err := d.Commit(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Release(b.Context(), append(held, in...)); err != nil {
			b.Fatal(err)
		}
		if err := d.Discard(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += rusage() - start
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
