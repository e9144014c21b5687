// Package devmount is a virtual /dev-style mount: null (reads empty,
// writes discarded), zero (reads zeros), random and urandom (read random
// bytes). A whole-file read of an endless device returns ReadSize bytes.
// Writes to any device are discarded when mounted read-write. A Dev is
// stateless and safe for concurrent use; forks share it.
package devmount
