package kv

import (
	"context"

	"github.com/forkspace/forkspace/cas"
)

// Overlay is an in-memory, ordered set of staged mutations with sequence
// numbers: the mirror of a workspace's staging rows. Not safe for
// concurrent use; the owner serialises access.
type Overlay struct{}

// NewOverlay returns an empty overlay.
func NewOverlay() *Overlay { panic("unimplemented") }

// Set stages key=value at seq.
func (o *Overlay) Set(key, value []byte, seq int64) { panic("unimplemented") }

// Delete stages a tombstone for key at seq.
func (o *Overlay) Delete(key []byte, seq int64) { panic("unimplemented") }

// Lookup returns the staged state of key: found is false when the overlay
// says nothing about key; deleted is true for a tombstone.
func (o *Overlay) Lookup(key []byte) (value []byte, deleted, found bool) { panic("unimplemented") }

// Len returns the number of staged keys.
func (o *Overlay) Len() int { panic("unimplemented") }

// MaxSeq returns the highest staged sequence number (0 if empty).
func (o *Overlay) MaxSeq() int64 { panic("unimplemented") }

// Mutations returns the staged mutations in key order and the highest seq
// among them.
func (o *Overlay) Mutations() (muts []Mutation, maxSeq int64) { panic("unimplemented") }

// Drop removes staged keys whose seq is <= maxSeq (those folded into a
// tree); keys restaged since stay.
func (o *Overlay) Drop(maxSeq int64) { panic("unimplemented") }

// Clone returns an independent copy.
func (o *Overlay) Clone() *Overlay { panic("unimplemented") }

// View is the merged state of a tree root and an overlay on top of it.
// A nil Overlay reads the tree alone.
type View struct {
	Store   *Store
	Root    cas.Hash
	Overlay *Overlay
}

// Get returns key's value, consulting the overlay first.
func (v View) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	panic("unimplemented")
}

// Scan calls fn for each live key in [start, end) of the merged view, in
// ascending order. Returning Stop ends the scan with nil.
func (v View) Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) error) error {
	panic("unimplemented")
}
