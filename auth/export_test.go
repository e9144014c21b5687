package auth

import "github.com/forkspace/forkspace/meta"

// MetaOf returns the metadata store of t (tests reopen it).
func MetaOf(t *Tokens) meta.Store { return t.meta }
