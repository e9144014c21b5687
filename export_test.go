package forkspace

// HoldUncovered keeps the recorder of uncovered changes from appending
// until release, which appends everything noted meanwhile, in one
// gathering, before it returns.
func (s *Store) HoldUncovered() (release func()) {
	u := s.uncovered
	u.flushing.Lock()
	return func() {
		u.flushing.Unlock()
		u.flush()
	}
}
