package tools

import "time"

// ASCIILower exposes asciiLower to the external tests.
func ASCIILower(s string) (string, bool) {
	dst := make([]byte, len(s))
	ok := asciiLower(dst, []byte(s))
	return string(dst), ok
}

// SetMaxReadFile lowers the largest file read loads until the returned
// function restores it.
func SetMaxReadFile(n int64) (restore func()) {
	old := maxReadFile
	maxReadFile = n
	return func() { maxReadFile = old }
}

// SetProgressEvery sets how often exec reports progress until the
// returned function restores it.
func SetProgressEvery(d time.Duration) (restore func()) {
	old := progressEvery
	progressEvery = d
	return func() { progressEvery = old }
}
