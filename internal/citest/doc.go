// Package citest decides what a test does when a component it needs (a
// browser, FUSE, PostgreSQL, node…) is missing: under CI (CI=true) the
// test fails, since CI must provide every component; elsewhere it is
// skipped, so a developer's machine without the component still runs the
// rest.
package citest
