package kv

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/forkspace/forkspace/cas"
)

// benchTree builds a tree of n keys shaped like forkspace's inode keys.
func benchTree(b *testing.B, n int) (*Store, *memNodes, cas.Hash) {
	s := New(newMemNodes(), Options{Seed: 42})
	src := s.src.(*memNodes)
	muts := make([]Mutation, 0, n)
	for i := range n {
		muts = append(muts, Mutation{Key: inodeKey(uint64(i)), Value: make([]byte, 60)})
	}
	return s, src, apply(b, s, src, cas.Hash{}, muts)
}

func inodeKey(ino uint64) []byte {
	k := []byte{'i', 0, 0, 0, 0, 0, 0, 0, 0, 'a'}
	binary.BigEndian.PutUint64(k[1:9], ino)
	return k
}

// BenchmarkFold1kScattered measures folding 1,000 staged changes spread
// over a 300k-key tree (the worst case for a fork or checkpoint).
func BenchmarkFold1kScattered(b *testing.B) {
	s, _, root := benchTree(b, 300_000)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		muts := make([]Mutation, 1000)
		for i := range muts {
			muts[i] = Mutation{Key: inodeKey(rng.Uint64N(300_000)), Value: []byte("changed")}
		}
		if _, _, err := s.Apply(context.Background(), root, muts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s, _, root := benchTree(b, 300_000)
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := s.Get(ctx, root, inodeKey(rng.Uint64N(300_000))); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
