package tools

// ASCIILower exposes asciiLower to the external tests.
func ASCIILower(s string) (string, bool) {
	dst := make([]byte, len(s))
	ok := asciiLower(dst, []byte(s))
	return string(dst), ok
}
