package s3mount_test

import (
	"fmt"
	"testing"

	"github.com/forkspace/forkspace/internal/s3test"
)

// benchObjects is the size of the benchmarked prefix.
const benchObjects = 10_000

// seeded starts a server holding benchObjects 1 KiB objects under "p/".
func seeded(b *testing.B) *s3test.Server {
	srv := s3test.Start(b, bucket)
	data := make([]byte, 1024)
	for i := range benchObjects {
		srv.Seed(b, bucket, fmt.Sprintf("p/d%02d/f%05d.txt", i%100, i), data)
	}
	return srv
}

// BenchmarkIndex10k lists a 10k-object prefix (10 pages of 1000).
func BenchmarkIndex10k(b *testing.B) {
	srv := seeded(b)
	m := open(b, options(srv, "p"))
	b.ReportAllocs()
	for b.Loop() {
		entries, err := m.List(b.Context())
		if err != nil || len(entries) != benchObjects {
			b.Fatalf("list: %d entries, %v", len(entries), err)
		}
	}
	b.ReportMetric(float64(srv.Count("GET", "/"+bucket))/float64(b.N), "lists/op")
}

// BenchmarkFirstRead10k fetches one 1 KiB object of a 10k-object prefix.
func BenchmarkFirstRead10k(b *testing.B) {
	srv := seeded(b)
	m := open(b, options(srv, "p"))
	b.SetBytes(1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := m.Fetch(b.Context(), fmt.Sprintf("d%02d/f%05d.txt", i%100, i%benchObjects)); err != nil {
			b.Fatalf("fetch: %v", err)
		}
		i++
	}
	b.ReportMetric(float64(srv.Total())/float64(b.N), "requests/op")
}
