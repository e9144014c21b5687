package tools

// commandOf is the shell command a call's arguments run, recorded in its
// audit entry ("" for calls other than exec).
func commandOf(in any) string {
	if e, ok := in.(execIn); ok {
		return e.Command
	}
	return ""
}
