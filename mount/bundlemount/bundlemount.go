package bundlemount

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/forkspace/forkspace/mount"
)

// Bundle is an archive mounted eagerly.
type Bundle struct {
	source string
	client *http.Client
}

var _ mount.Eager = (*Bundle)(nil)

// New returns a bundle read from source (a file path, or an http or https
// URL) on Materialize. client nil means http.DefaultClient.
func New(source string, client *http.Client) *Bundle {
	if client == nil {
		client = http.DefaultClient
	}
	return &Bundle{source: source, client: client}
}

// Driver parses "bundle+https://host/x.tgz", "bundle+http://…" and
// "bundle:///abs/path.zip" (also "bundle:relative/path.tar").
func Driver(u *url.URL, _ mount.Options) (mount.Mount, error) {
	inner := *u
	switch u.Scheme {
	case "bundle+http", "bundle+https":
		inner.Scheme = strings.TrimPrefix(u.Scheme, "bundle+")
		return New(inner.String(), nil), nil
	case "bundle":
		p := u.Path
		if u.Opaque != "" {
			p = u.Opaque
		}
		if p == "" {
			return nil, fmt.Errorf("bundle url: %w: no path", fs.ErrInvalid)
		}
		return New(p, nil), nil
	}
	return nil, fmt.Errorf("bundle url: %w: scheme %q", fs.ErrInvalid, u.Scheme)
}

// Kind returns "bundle".
func (b *Bundle) Kind() string { return "bundle" }

func (b *Bundle) load(ctx context.Context) ([]byte, error) {
	if !strings.HasPrefix(b.source, "http://") && !strings.HasPrefix(b.source, "https://") {
		return os.ReadFile(b.source)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.source, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fs.ErrInvalid, err)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", mount.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("get %s: %w", mount.Redact(b.source), fs.ErrNotExist)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("get %s: %w: %s", mount.Redact(b.source), fs.ErrPermission, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("get %s: %w: %s", mount.Redact(b.source), mount.ErrUnavailable, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", mount.ErrUnavailable, err)
	}
	return data, nil
}

// Materialize reads the archive and writes every file, directory and
// symbolic link through api.
func (b *Bundle) Materialize(ctx context.Context, api mount.WriteAPI) error {
	data, err := b.load(ctx)
	if err != nil {
		return fmt.Errorf("materialize bundle: %w", err)
	}
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		err = unzip(data, api)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			err = untar(zr, api)
		}
	default:
		err = untar(bytes.NewReader(data), api)
	}
	if err != nil {
		return fmt.Errorf("materialize bundle %s: %w", mount.Redact(b.source), err)
	}
	return nil
}

// clean returns an archive name as a mount-relative path, or fs.ErrInvalid
// for a name that is absolute or climbs out.
func clean(name string) (string, error) {
	p := path.Clean(strings.TrimSuffix(name, "/"))
	if strings.HasPrefix(name, "/") || p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
		return "", fmt.Errorf("%w: entry %q escapes the bundle", fs.ErrInvalid, name)
	}
	return p, nil
}

func untar(r io.Reader, api mount.WriteAPI) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", fs.ErrInvalid, err)
		}
		p, err := clean(h.Name)
		if err != nil {
			return err
		}
		if p == "." {
			continue
		}
		mode := fs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			err = api.Mkdir(p, mode)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = api.WriteFile(p, data, mode)
			}
		case tar.TypeSymlink:
			err = api.Symlink(h.Linkname, p)
		default:
			continue // hard links, devices, fifos: not carried
		}
		if err != nil {
			return err
		}
	}
}

func unzip(data []byte, api mount.WriteAPI) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%w: %w", fs.ErrInvalid, err)
	}
	for _, f := range zr.File {
		p, err := clean(f.Name)
		if err != nil {
			return err
		}
		if p == "." {
			continue
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			err = api.Mkdir(p, mode.Perm())
		case mode&fs.ModeSymlink != 0:
			var target []byte
			if target, err = readZip(f); err == nil {
				err = api.Symlink(string(target), p)
			}
		case mode.IsRegular():
			var b []byte
			if b, err = readZip(f); err == nil {
				err = api.WriteFile(p, b, mode.Perm())
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readZip(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fs.ErrInvalid, err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
