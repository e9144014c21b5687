// Package mounttest is the conformance suite every mount driver passes:
// listing, fetching, writing and deleting (lazy), materializing (eager),
// and serving (virtual, with fstest.TestFS over its io/fs view).
package mounttest
