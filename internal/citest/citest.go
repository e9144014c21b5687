package citest

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing ends tb for want of a component, saying what is missing and,
// under CI, that CI must provide it: a failure in CI, a skip elsewhere.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		tb.Fatalf("%s (CI must provide it)", msg)
	}
	tb.Skip(msg)
}
