package memmeta_test

import (
	"testing"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/meta/metatest"
)

func open(tb testing.TB) meta.Store {
	s := memmeta.New()
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	metatest.Run(t, func(t *testing.T) meta.Store { return open(t) })
}

func TestCopy(t *testing.T) {
	metatest.RunCopy(t, func(t *testing.T) meta.Store { return open(t) })
}

func benchOpen(b *testing.B) meta.Store { return open(b) }

func BenchmarkUpdate(b *testing.B)         { metatest.BenchmarkUpdate(b, benchOpen) }
func BenchmarkUpdateParallel(b *testing.B) { metatest.BenchmarkUpdateParallel(b, benchOpen) }
func BenchmarkGetNode(b *testing.B)        { metatest.BenchmarkGetNode(b, benchOpen) }
func BenchmarkStaged(b *testing.B)         { metatest.BenchmarkStaged(b, benchOpen) }
func BenchmarkView(b *testing.B)           { metatest.BenchmarkView(b, benchOpen) }
func BenchmarkUpdateRows(b *testing.B)     { metatest.BenchmarkUpdateRows(b, benchOpen) }
func BenchmarkPutNodes(b *testing.B)       { metatest.BenchmarkPutNodes(b, benchOpen) }
