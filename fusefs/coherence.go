package fusefs

// Each descriptor of a file writes into a vfs handle of its own, whose
// commit replaces the whole contents (vfs.File): two descriptors writing
// different ranges would each commit what it saw plus its own writes, and
// the last close would undo the other's. So that what one descriptor
// wrote is never undone by another, as on a local file system, the mount
// keeps at most one handle of a file with writes not committed yet
// (dirty): before a handle writes (write, ftruncate, fallocate), the
// other handles' writes are committed; and a handle that last committed
// before something else did (another descriptor, a truncate by path, an
// open with O_TRUNC) drops its buffer before it reads or writes
// (vfs.File.Rebase), so it starts over the latest contents. A node counts
// the commits made to its contents through the mount (gen); a handle
// remembers the count it is current with (seen). The kernel serialises
// writes to one inode, so these steps do not race with each other.

// committed records a commit to n's contents by c (nil: by path): c is
// current, every other handle is stale.
func (n *node) committed(c *handle) {
	n.mu.Lock()
	n.gen++
	if c != nil {
		c.seen = n.gen
	}
	n.mu.Unlock()
}

// dirtyHandles returns n's open handles, but for except, that hold writes
// not committed yet.
func (n *node) dirtyHandles(except *handle) []*handle {
	n.mu.Lock()
	defer n.mu.Unlock()
	var hs []*handle // no allocation unless another handle is dirty
	for h := range n.open {
		if h != except && h.dirty.Load() {
			hs = append(hs, h)
		}
	}
	return hs
}

// flushOthers commits the writes of n's dirty handles, but for except
// (nil: all of them). A poisoned handle has nothing to commit (syncWriters).
func (n *node) flushOthers(except *handle) error {
	for _, w := range n.dirtyHandles(except) {
		if err := w.f.Flush(); err != nil && !w.f.Poisoned() {
			return err
		}
		w.dirty.Store(false)
		n.committed(w)
	}
	return nil
}

// current makes h start over the latest contents if anything was
// committed to n since h last was current.
func (n *node) current(h *handle) error {
	n.mu.Lock()
	stale := h.seen != n.gen
	h.seen = n.gen
	n.mu.Unlock()
	if !stale {
		return nil
	}
	return h.f.Rebase()
}

// beforeWrite prepares h to change n's contents: the other handles'
// writes committed, h current.
func (n *node) beforeWrite(h *handle) error {
	if err := n.flushOthers(h); err != nil {
		return err
	}
	return n.current(h)
}

// afterCommit records that h's commit (close, fsync, a stage) succeeded.
func (n *node) afterCommit(h *handle) {
	if h.dirty.Swap(false) {
		n.committed(h)
	}
}
