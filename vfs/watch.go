package vfs

import (
	"context"
	"sync"
)

// Event is a mutation of an FS's visible state that has become durable.
type Event struct {
	// Op is the operation ("write", "rename", "sync", "batch", "reset"…).
	Op string
	// Name is a path the operation named, as given to it (not resolved
	// through symbolic links). A rename or link reports both its paths,
	// as two changes.
	Name string
	// Tree reports that anything beneath Name may have changed too: a
	// Reset (Name "."), or a mount's index of its root.
	Tree bool
	// Remote reports a change another process made to a shared workspace
	// (Options.Shared), heard of when the head was reloaded (Op "reload",
	// Name ".", Tree): caches drop what they hold; recorders of changes
	// skip it, since the process that made it recorded it.
	Remote bool
}

// watchers are the callbacks registered with Watch.
type watchers struct {
	mu   sync.RWMutex
	next int
	fns  map[int]func(context.Context, Event)
}

// Watch registers fn to hear of every change of f's state once it is
// durable, from every surface that mutates f (its methods, handles'
// Sync and Close, batches when they land, Reset, mounts' index and stub
// fills). fn is called on the mutating goroutine with the mutation's
// context (its values; it may be cancelled by then) and must return
// quickly without mutating f. The returned stop unregisters fn; after it
// returns fn is not called again.
func (f *FS) Watch(fn func(ctx context.Context, e Event)) (stop func()) {
	w := &f.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(context.Context, Event){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}
}

// notify calls the watchers with e.
func (f *FS) notify(ctx context.Context, e Event) {
	w := &f.watch
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, fn := range w.fns {
		fn(ctx, e)
	}
}
