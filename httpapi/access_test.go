package httpapi

import "testing"

// TestRouteAccess: every route of the table declares what it needs of a
// token, so the middleware checks it (a route added without one fails
// here).
func TestRouteAccess(t *testing.T) {
	for _, rt := range routes {
		if rt.need == 0 || rt.need > needToken {
			t.Errorf("%s %s (%s) declares no access (route.need)", rt.method, rt.pattern, rt.op)
		}
	}
}
