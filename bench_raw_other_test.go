//go:build !linux

package forkspace_test

import (
	"testing"
	"time"
)

// rawFiles needs sync_file_range (Linux).
func rawFiles(b *testing.B, _ []byte, _ bool) { b.Skip("sync_file_range is Linux only") }

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
