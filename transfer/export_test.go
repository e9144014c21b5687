package transfer

// SetNameSetMemory sets how many names a transfer holds in memory before
// it spills them (setMemory) until the returned function restores it.
func SetNameSetMemory(n int) (restore func()) {
	old := setMemory
	setMemory = n
	return func() { setMemory = old }
}
