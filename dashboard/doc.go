// Package dashboard serves forkspace's web dashboard: one page and its
// script and style sheet, embedded in the binary, so `forkspace serve`
// shows it at /ui/ with no build step at install.
//
// The page talks only to the REST API under /v1 (with the bearer token
// the person signs in with) and to the change feed for live updates; it
// holds no state of its own beyond the last confirmed listings it caches
// in sessionStorage to paint a reload at once. See docs/dashboard.md.
//
// The page names its script and style sheet by the hash of their bytes,
// and those URLs are cached as immutable, so a reload runs the cached
// script without a request: nothing but the page itself stands between
// a reload and the cached tree on screen.
package dashboard
