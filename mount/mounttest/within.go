package mounttest

import (
	"testing"
	"time"
)

// Within fails the test when fn has not returned after a generous
// deadline: a hang (a deadlock, a request without a timeout), not a slow
// run.
func Within(t testing.TB, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s never returned", what)
	}
}
