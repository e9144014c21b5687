//go:build !linux

package fileblob

import (
	"os"
	"path/filepath"
)

// leafBufSize is unused where os.ReadDir reads leaves.
const leafBufSize = 0

// readLeaf calls fn with the name of each regular file in the leaf
// directory sub of the open shard directory d.
func readLeaf(d *os.File, sub string, _ []byte, fn func(name []byte)) error {
	entries, err := os.ReadDir(filepath.Join(d.Name(), sub))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			fn([]byte(e.Name()))
		}
	}
	return nil
}
