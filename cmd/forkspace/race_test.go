//go:build race

package main

// Under the race detector the command under test is built with it too, so
// the end-to-end tests also look for races in the CLI's code paths.
func init() { buildFlags = append(buildFlags, "-race") }
