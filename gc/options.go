package gc

import (
	"log/slog"
	"sync"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Deps are the store components the collector reads and deletes from.
type Deps struct {
	Meta  meta.Store
	Blobs blob.Store
	// KV reads trees (its cache is bypassed by walks).
	KV *kv.Store
}

// DefaultGrace is how old unreachable data must be before it is collected
// when Options.Grace is zero.
const DefaultGrace = 24 * time.Hour

// NoGrace (any negative Grace) collects unreachable data whatever its age.
const NoGrace time.Duration = -1

// DefaultIntentExpiry is how long a pending upload intent protects its
// blobs when Options.IntentExpiry is zero: a writer that held one longer
// is presumed dead.
const DefaultIntentExpiry = 24 * time.Hour

// Options configure a collection. The zero value means defaults.
type Options struct {
	// Grace is how long unreachable data is kept, measured in database
	// time (DefaultGrace if zero; NoGrace or any negative value: none).
	Grace time.Duration
	// IntentExpiry is the age past which a pending upload intent is
	// dropped (DefaultIntentExpiry if zero). It is independent of Grace so
	// that a short grace never drops the intent of a live writer.
	IntentExpiry time.Duration
	// Lock, if set, is held while the roots are read.
	Lock sync.Locker
	// Progress, if set, is called as phases advance: done of total units
	// (total 0 when unknown).
	Progress func(phase string, done, total int64)
	// Logger receives notices (default slog.Default()).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	switch {
	case o.Grace == 0:
		o.Grace = DefaultGrace
	case o.Grace < 0:
		o.Grace = 0
	}
	if o.IntentExpiry <= 0 {
		o.IntentExpiry = DefaultIntentExpiry
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Logger = o.Logger.With("component", "gc")
	return o
}

func (o Options) progress(phase string, done, total int64) {
	if o.Progress != nil {
		o.Progress(phase, done, total)
	}
}

// Counts tallies objects and their stored bytes by kind.
type Counts struct {
	Nodes     int64 `json:"nodes"`
	NodeBytes int64 `json:"node_bytes"`
	Bodies    int64 `json:"bodies"`
	BodyBytes int64 `json:"body_bytes"`
	Blobs     int64 `json:"blobs"`
	BlobBytes int64 `json:"blob_bytes"`
}

// Objects is the number of objects of every kind.
func (c Counts) Objects() int64 { return c.Nodes + c.Bodies + c.Blobs }

// Bytes is the stored size of every kind.
func (c Counts) Bytes() int64 { return c.NodeBytes + c.BodyBytes + c.BlobBytes }

// kind is the kind of a stored object.
type kind int

const (
	kindNode kind = iota
	kindBody
	kindBlob
)

// add counts one object of kind k and size bytes.
func (c *Counts) add(k kind, size int64) {
	switch k {
	case kindNode:
		c.Nodes++
		c.NodeBytes += size
	case kindBody:
		c.Bodies++
		c.BodyBytes += size
	case kindBlob:
		c.Blobs++
		c.BlobBytes += size
	}
}
