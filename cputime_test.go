package forkspace_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used: on
// a loaded machine a benchmark's CPU time per operation varies less than
// its wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
