//go:build !amd64 && !arm64

package sandbox

// The seccomp filter is written for amd64 and arm64; elsewhere Exec
// refuses to run (errUnsupportedArch).
const (
	auditArch = 0
	x32Bit    = 0
)

var archDeniedSyscalls []uint32
