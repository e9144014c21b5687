package webdavfs

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/webdav"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/vfs"
)

// readFile is an entry opened for reading (GET, PROPFIND, the source of
// a COPY): a vfs handle with the entry's dead properties.
type readFile struct {
	*vfs.File
	props
	name string
}

func (f *readFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return nil, fail(f.ctx, err)
	}
	return named(fi, f.name), nil
}

func (f *readFile) Readdir(count int) ([]fs.FileInfo, error) {
	des, err := f.ReadDir(count)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fail(f.ctx, err)
	}
	out := make([]fs.FileInfo, 0, len(des))
	for _, de := range des {
		fi, ierr := de.Info()
		if ierr != nil {
			return nil, fail(f.ctx, ierr)
		}
		out = append(out, fi)
	}
	return out, err
}

func (f *readFile) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
}

// propFile is an entry opened to change its properties (PROPPATCH).
type propFile struct {
	props
	info fs.FileInfo
}

func (f *propFile) Stat() (fs.FileInfo, error)         { return f.info, nil }
func (f *propFile) Readdir(int) ([]fs.FileInfo, error) { return nil, io.EOF }
func (f *propFile) Read([]byte) (int, error)           { return 0, io.EOF }
func (f *propFile) Seek(int64, int) (int64, error)     { return 0, nil }
func (f *propFile) Close() error                       { return nil }

func (f *propFile) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.info.Name(), Err: fs.ErrPermission}
}

// upload is a whole-file write: the bytes written stream to
// Audited.WriteFileFrom, which replaces the file once Close reports that
// they all arrived — and changes nothing if they did not.
type upload struct {
	props
	pw   *io.PipeWriter
	done chan error
	n    int64
	perm fs.FileMode
	// pending are dead properties set before the file exists (COPY copies
	// them before it closes the destination).
	pending []webdav.Proppatch
}

func newUpload(ctx context.Context, t target, perm fs.FileMode) *upload {
	pr, pw := io.Pipe()
	u := &upload{props: props{ctx: ctx, t: t}, pw: pw, done: make(chan error, 1), perm: perm}
	go func() {
		_, err := t.ws.WriteFileFrom(ctx, t.rel, pr, perm&fs.ModePerm)
		pr.CloseWithError(err) // unblocks a writer if the write failed early
		u.done <- err
	}()
	return u
}

func (u *upload) Write(p []byte) (int, error) {
	n, err := u.pw.Write(p)
	u.n += int64(n)
	if err != nil {
		return n, fail(u.ctx, err)
	}
	return n, nil
}

// Close ends the upload: the file is replaced if the request's body
// arrived whole, and left as it was otherwise.
func (u *upload) Close() error {
	if err := requestOf(u.ctx).bodyFailure(); err != nil {
		u.pw.CloseWithError(err)
	} else {
		u.pw.Close()
	}
	if err := <-u.done; err != nil {
		return fail(u.ctx, err)
	}
	if len(u.pending) > 0 {
		if _, err := u.props.Patch(u.pending); err != nil {
			return err
		}
	}
	return nil
}

// Stat describes the file being written (the handler asks before Close,
// for the ETag of its answer).
func (u *upload) Stat() (fs.FileInfo, error) {
	return uploadInfo{name: nameOf(u.t), size: u.n, mode: u.perm & fs.ModePerm}, nil
}

func (u *upload) Read([]byte) (int, error)           { return 0, io.EOF }
func (u *upload) Seek(int64, int) (int64, error)     { return 0, nil }
func (u *upload) Readdir(int) ([]fs.FileInfo, error) { return nil, io.EOF }

func (u *upload) Patch(patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	u.pending = append(u.pending, patches...)
	return okStatus(patches), nil
}

type uploadInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i uploadInfo) Name() string       { return i.name }
func (i uploadInfo) Size() int64        { return i.size }
func (i uploadInfo) Mode() fs.FileMode  { return i.mode }
func (i uploadInfo) ModTime() time.Time { return time.Now() }
func (i uploadInfo) IsDir() bool        { return false }
func (i uploadInfo) Sys() any           { return nil }

// deadPrefix starts the extended attributes that hold dead properties.
const deadPrefix = "user.dav."

// props are the dead properties of a target's entry, one extended
// attribute each: the name is deadPrefix and a digest of the property's
// XML name, the value the property as JSON.
type props struct {
	ctx context.Context
	t   target
}

var _ webdav.DeadPropsHolder = props{}

type storedProp struct {
	Space    string `json:"space"`
	Local    string `json:"local"`
	Lang     string `json:"lang,omitempty"`
	InnerXML string `json:"xml"`
}

func attrOf(n xml.Name) string {
	return deadPrefix + cas.Sum([]byte(n.Space + " " + n.Local)).String()[:32]
}

func (p props) DeadProps() (map[xml.Name]webdav.Property, error) {
	names, err := p.t.tree.Listxattr(p.ctx, p.t.rel)
	if err != nil {
		return nil, fail(p.ctx, err)
	}
	out := map[xml.Name]webdav.Property{}
	for _, a := range names {
		if !strings.HasPrefix(a, deadPrefix) {
			continue
		}
		v, err := p.t.tree.Getxattr(p.ctx, p.t.rel, a)
		if err != nil {
			return nil, fail(p.ctx, err)
		}
		var sp storedProp
		if json.Unmarshal(v, &sp) != nil {
			continue // not ours
		}
		n := xml.Name{Space: sp.Space, Local: sp.Local}
		out[n] = webdav.Property{XMLName: n, Lang: sp.Lang, InnerXML: []byte(sp.InnerXML)}
	}
	return out, nil
}

// Patch sets and removes properties, in order. A failure after some have
// changed is an internal error (500), as the handler's contract allows.
func (p props) Patch(patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	if p.t.ws == nil {
		return nil, fail(p.ctx, errReadOnly("proppatch", p.t.ref))
	}
	for _, patch := range patches {
		for _, prop := range patch.Props {
			a := attrOf(prop.XMLName)
			var err error
			if patch.Remove {
				err = p.t.ws.Removexattr(p.ctx, p.t.rel, a)
				if errors.Is(err, fs.ErrNotExist) {
					err = nil // removing a property that is not set succeeds
				}
			} else {
				v, _ := json.Marshal(storedProp{Space: prop.XMLName.Space, Local: prop.XMLName.Local, Lang: prop.Lang, InnerXML: string(prop.InnerXML)})
				err = p.t.ws.Setxattr(p.ctx, p.t.rel, a, v)
			}
			if err != nil {
				return nil, fail(p.ctx, fmt.Errorf("property %s: %w", prop.XMLName.Local, err))
			}
		}
	}
	return okStatus(patches), nil
}

// okStatus is the answer to patches that all succeeded.
func okStatus(patches []webdav.Proppatch) []webdav.Propstat {
	st := webdav.Propstat{Status: http.StatusOK}
	for _, patch := range patches {
		for _, prop := range patch.Props {
			st.Props = append(st.Props, webdav.Property{XMLName: prop.XMLName})
		}
	}
	return []webdav.Propstat{st}
}
