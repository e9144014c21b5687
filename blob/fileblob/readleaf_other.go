//go:build !unix

package fileblob

import (
	"io/fs"
	"os"
	"path/filepath"
)

// readLeaf reads the leaf directory sub of the open shard directory d.
func readLeaf(d *os.File, sub string) ([]fs.DirEntry, error) {
	return os.ReadDir(filepath.Join(d.Name(), sub))
}
