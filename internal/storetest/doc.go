// Package storetest opens the small stores the door tests (WebDAV, S3)
// run against: a real store in a temporary directory with one workspace
// holding an acknowledged file and a checkpoint of it, so each test can
// check that what it refuses leaves that file as it was.
package storetest
