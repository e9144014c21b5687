package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/internal/urlcreds"
)

// blobStore opens the blob store --blob ($FORKSPACE_BLOB) names, or nil
// for the store directory's own (blobs/ under --store):
//
//	s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=true   S3-compatible
//	file:///DIR or DIR                                          a local directory
//
// Credentials come from the environment; a URL carrying them is refused
// (a usage error naming where they are, never what they are).
func (a *app) blobStore() (blob.Store, error) {
	raw := a.blobURL
	if raw == "" {
		return nil, nil
	}
	if err := urlcreds.Check(raw); err != nil {
		return nil, usage("--blob %s: %v", urlcreds.Redact(raw), err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, usage("--blob: %v", err)
	}
	switch u.Scheme {
	case "s3":
		s, err := s3blob.OpenURL(raw)
		if err != nil {
			return nil, usage("--blob: %v", err)
		}
		return s, nil
	case "file", "":
		dir := u.Path
		if u.Scheme == "" {
			dir = raw
		}
		if u.Host != "" || dir == "" {
			return nil, usage("--blob %s: want file:///DIR", raw)
		}
		return fileblob.Open(filepath.Clean(dir))
	default:
		return nil, usage("--blob %s: %v", urlcreds.Redact(raw), fmt.Errorf("%w: unknown scheme %q (known: s3, file)", fs.ErrInvalid, u.Scheme))
	}
}
