// Package bundlemount is an eager mount of a tar, tar.gz or zip archive
// read from a file path or an http(s) URL. The format is sniffed from the
// bytes (gzip and zip magic numbers, tar otherwise). Entry names are
// checked: absolute names and names climbing out with ".." are
// fs.ErrInvalid, and so the whole index fails. An unreachable URL or an
// HTTP 5xx is mount.ErrUnavailable, an HTTP 404 fs.ErrNotExist.
package bundlemount
