package metatest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/meta"
)

// BenchOpener returns a new, empty store for one benchmark and closes it
// when the benchmark ends.
type BenchOpener func(b *testing.B) meta.Store

// benchRow is the size of the staging value the Update benchmarks write,
// about one encoded inode.
const benchRow = 64

// BenchmarkUpdate measures one Update writing one small staging row, from
// a single caller: the latency of a metadata mutation.
func BenchmarkUpdate(b *testing.B, open BenchOpener) {
	s := open(b)
	createWorkspaces(b, s, "bench")
	ctx := context.Background()
	value := make([]byte, benchRow)
	var seq int64
	b.SetBytes(benchRow)
	b.ReportAllocs()
	for b.Loop() {
		seq++
		row := []meta.Staged{{Key: fmt.Appendf(nil, "key-%d", seq%1024), Value: value, Seq: seq}}
		if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutStaged("id-bench", row) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateParallel is BenchmarkUpdate with 8 concurrent callers,
// which a group-committing driver serves with shared transactions.
func BenchmarkUpdateParallel(b *testing.B, open BenchOpener) {
	const callers = 8
	s := open(b)
	createWorkspaces(b, s, "bench")
	ctx := context.Background()
	value := make([]byte, benchRow)
	var seq atomic.Int64
	b.SetBytes(benchRow)
	b.ReportAllocs()
	b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			row := []meta.Staged{{Key: fmt.Appendf(nil, "key-%d", n%1024), Value: value, Seq: n}}
			if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutStaged("id-bench", row) }); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGetNode measures a point read of a 4 KiB node among 10,000.
func BenchmarkGetNode(b *testing.B, open BenchOpener) {
	const nodes, size = 10000, 4096
	s := open(b)
	hashes := make([][32]byte, nodes)
	update(b, s, func(tx meta.Tx) error {
		objs := make([]meta.Object, nodes)
		for i := range objs {
			data := make([]byte, size)
			copy(data, fmt.Sprintf("node %d", i))
			objs[i] = meta.Object{Hash: hashOf(string(data)), Data: data}
			hashes[i] = objs[i].Hash
		}
		return tx.PutNodes(objs)
	})
	ctx := context.Background()
	b.SetBytes(size)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.GetNode(ctx, hashes[i%nodes]); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

// BenchmarkStaged measures a View listing 1,000 staging rows.
func BenchmarkStaged(b *testing.B, open BenchOpener) {
	const rows = 1000
	s := open(b)
	createWorkspaces(b, s, "bench")
	update(b, s, func(tx meta.Tx) error {
		batch := make([]meta.Staged, rows)
		for i := range batch {
			batch[i] = meta.Staged{Key: fmt.Appendf(nil, "key-%05d", i), Value: make([]byte, benchRow), Seq: int64(i)}
		}
		return tx.PutStaged("id-bench", batch)
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.View(ctx, func(tx meta.Tx) error {
			got, err := tx.Staged("id-bench")
			if err == nil && len(got) != rows {
				err = fmt.Errorf("got %d rows, want %d", len(got), rows)
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkView measures a View that reads one workspace row: the cost of
// a read transaction.
func BenchmarkView(b *testing.B, open BenchOpener) {
	s := open(b)
	createWorkspaces(b, s, "bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.View(ctx, func(tx meta.Tx) error {
			_, err := tx.Workspace("id-bench")
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateRows measures one Update writing 8 staging rows, about
// what creating a file stages.
func BenchmarkUpdateRows(b *testing.B, open BenchOpener) {
	const rows = 8
	s := open(b)
	createWorkspaces(b, s, "bench")
	ctx := context.Background()
	value := make([]byte, benchRow)
	var seq int64
	b.SetBytes(rows * benchRow)
	b.ReportAllocs()
	for b.Loop() {
		batch := make([]meta.Staged, rows)
		for i := range batch {
			seq++
			batch[i] = meta.Staged{Key: fmt.Appendf(nil, "key-%d", seq%4096), Value: value, Seq: seq}
		}
		if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutStaged("id-bench", batch) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutNodes measures one Update storing 256 new 4 KiB nodes, about
// what folding staging into a tree writes.
func BenchmarkPutNodes(b *testing.B, open BenchOpener) {
	const nodes, size = 256, 4096
	s := open(b)
	ctx := context.Background()
	data := make([]byte, nodes*size)
	n := 0
	b.SetBytes(nodes * size)
	b.ReportAllocs()
	for b.Loop() {
		objs := make([]meta.Object, nodes)
		for i := range objs {
			n++
			d := data[i*size : (i+1)*size]
			copy(d, fmt.Sprintf("node %d", n))
			objs[i] = meta.Object{Hash: hashOf(string(d)), Data: d}
		}
		if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutNodes(objs) }); err != nil {
			b.Fatal(err)
		}
	}
}
