// Package gittest builds real git repositories with the git binary and
// serves them over smart HTTP on loopback, for tests of code that clones.
//
// NewFixture creates, in a temp dir, a bare repository with a known history
// (commits, an annotated and a lightweight tag, a branch, an executable
// file, symlinks, nested directories). Serve runs `git http-backend` behind
// Go's net/http/cgi handler on 127.0.0.1 — the real smart-HTTP server git
// ships — optionally behind HTTP basic auth that demands a token, and counts
// requests.
//
// git must be installed (scripts/test.sh installs it); without it every
// helper fails the test rather than skipping it.
package gittest
