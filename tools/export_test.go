package tools

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
