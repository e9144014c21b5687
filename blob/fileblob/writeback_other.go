//go:build !linux

package fileblob

import "os"

// startWriteback does nothing where sync_file_range(2) does not exist.
func startWriteback(*os.File) {}
