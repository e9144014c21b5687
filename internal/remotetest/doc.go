// Package remotetest holds store-level tests of a store kept on
// PostgreSQL (internal/pgtest) and an S3-compatible bucket (versitygw,
// internal/s3test): the seed 003 lifecycle with its garbage collection
// asserted by listing the bucket, stores sharing a bucket under different
// prefixes, and PostgreSQL restarted under a stream of writes. It has no
// code of its own; with CI=true a missing server fails its tests.
package remotetest
