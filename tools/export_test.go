package tools

import "time"

// ContainsFold exposes containsFold, looking for needle's rarest byte as
// grep does, to the external tests.
func ContainsFold(data, needle string) bool {
	return containsFold([]byte(data), []byte(needle), rarestByte([]byte(needle)))
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
