package memblob_test

import (
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/memblob"
)

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(*testing.T) blob.Store { return memblob.New() })
}

func BenchmarkStore(b *testing.B) {
	blobtest.Benchmark(b, func(*testing.B) blob.Store { return memblob.New() })
}
