// Package errdefs is forkspace's error vocabulary: the sentinel errors that
// io/fs does not define (ErrNotEmpty, ErrNotDir, ErrIsDir, ErrReadOnly,
// ErrConflict, ErrCorrupt, ErrQuota, ErrNameTooLong, ErrLoop, ErrBusy,
// ErrStale).
//
// Every package reports failures with an io/fs sentinel (fs.ErrNotExist,
// fs.ErrExist, fs.ErrInvalid, fs.ErrPermission, fs.ErrClosed), one of these,
// or errors.ErrUnsupported, wrapped so errors.Is finds it. Operations on a
// path return *fs.PathError. Protocol edges (CLI exit codes, errno, HTTP
// status) map these sentinels and nothing else.
//
// Redact makes an error's text fit to show someone not on the store's
// host (a model, a client of the server): it names no host path.
//
// It imports only the standard library so that every layer can use it.
package errdefs
