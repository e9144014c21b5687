//go:build !linux

package forkspace_test

import "testing"

// rawFiles needs sync_file_range (Linux).
func rawFiles(b *testing.B, _ []byte, _ bool) { b.Skip("sync_file_range is Linux only") }
