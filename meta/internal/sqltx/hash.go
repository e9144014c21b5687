package sqltx

import (
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// rootArg converts a tree root for storage: the zero hash (the empty tree)
// is NULL.
func rootArg(h cas.Hash) any {
	if h.IsZero() {
		return nil
	}
	return h[:]
}

// scanRoot converts a stored tree root; NULL is the zero hash, any length
// other than cas.Size is errdefs.ErrCorrupt.
func scanRoot(b []byte) (cas.Hash, error) {
	if len(b) == 0 {
		return cas.Hash{}, nil
	}
	h, err := cas.FromBytes(b)
	if err != nil {
		return h, fmt.Errorf("read root: %w: %w", errdefs.ErrCorrupt, err)
	}
	return h, nil
}
