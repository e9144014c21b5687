package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// Client is the API over HTTP: a client of a server's /v1 routes. Its
// errors are *Error, which unwrap to the sentinel the server's error code
// names, so callers check them with errors.Is exactly as with Local.
type Client struct {
	base  string
	http  *http.Client
	actor audit.Actor
	token string
}

var _ API = (*Client)(nil)

// ClientOptions configure a Client.
type ClientOptions struct {
	// HTTP is the client used (nil: a client without an overall timeout,
	// since downloads, uploads and exec may run long).
	HTTP *http.Client
	// Actor is sent with every call, for the audit log.
	Actor audit.Actor
	// Token, if set, is sent with every call (Authorization: Bearer).
	Token string
}

// NewClient returns a client of the server at base ("http://HOST:PORT").
func NewClient(base string, opts ClientOptions) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server address %s: %w: want http://HOST:PORT", quoteShort(base), ErrBadRequest)
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	return &Client{base: strings.TrimRight(u.String(), "/"), http: opts.HTTP, actor: opts.Actor, token: opts.Token}, nil
}

// fileURL is the URL of workspace path p under route kind ("files",
// "stat", "dir") of state. The path is cleaned first, so a bad one fails
// here with the same error as in Local.
func (c *Client) fileURL(q url.Values, state, kind, p string) (string, error) {
	p, err := vfs.CleanPath(p)
	if err != nil {
		return "", err
	}
	esc := ""
	if p != "." {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		esc = strings.Join(segs, "/")
	}
	return c.u(q, ws(state), kind, esc), nil
}

// u builds a URL: /v1/ + the parts (escaped by the caller) + the query.
func (c *Client) u(q url.Values, parts ...string) string {
	s := c.base + "/v1/" + strings.Join(parts, "/")
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

func ws(name string) string { return "workspaces/" + url.PathEscape(name) }

// do sends a request and returns the response of a success (status < 300,
// or 304); any other status is returned as *Error.
func (c *Client) do(ctx context.Context, method, u string, body io.Reader, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c.actor.Name != "" {
		req.Header.Set(ActorHeader, c.actor.Name)
	}
	if c.actor.Session != "" {
		req.Header.Set(SessionHeader, c.actor.Session)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	e := &Error{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusNotModified {
		e.Code, e.Message = CodeNotModified, "not modified"
		return nil, e
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(data, e) != nil || e.Code == "" {
		e.Code, e.Message = CodeInternal, fmt.Sprintf("%s %s: %s", method, u, resp.Status)
	}
	return nil, e
}

// call sends in (nil: no body) as JSON and decodes the reply into out
// (nil: none expected).
func (c *Client) call(ctx context.Context, method, u string, in, out any) error {
	var body io.Reader
	h := http.Header{}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
		h.Set("Content-Type", "application/json")
	}
	resp, err := c.do(ctx, method, u, body, h)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode reply: %w", method, u, err)
	}
	return nil
}

func pageQuery(r PageRequest) url.Values {
	q := url.Values{}
	if r.Cursor != "" {
		q.Set("cursor", r.Cursor)
	}
	if r.Limit != 0 {
		q.Set("limit", strconv.Itoa(r.Limit))
	}
	return q
}

func (c *Client) ListWorkspaces(ctx context.Context, r PageRequest) (p WorkspacePage, err error) {
	return p, c.call(ctx, "GET", c.u(pageQuery(r), "workspaces"), nil, &p)
}

func (c *Client) CreateWorkspace(ctx context.Context, r CreateRequest) (i forkspace.Info, err error) {
	return i, c.call(ctx, "POST", c.u(nil, "workspaces"), r, &i)
}

func (c *Client) WorkspaceInfo(ctx context.Context, name string) (i forkspace.Info, err error) {
	return i, c.call(ctx, "GET", c.u(nil, ws(name)), nil, &i)
}

func (c *Client) DeleteWorkspace(ctx context.Context, name string) error {
	return c.call(ctx, "DELETE", c.u(nil, ws(name)), nil, nil)
}

func (c *Client) ForkWorkspace(ctx context.Context, src string, r ForkRequest) (i forkspace.Info, err error) {
	return i, c.call(ctx, "POST", c.u(nil, ws(src), "fork"), r, &i)
}

func (c *Client) Parent(ctx context.Context, name string) (string, error) {
	var s StateJSON
	return s.State, c.call(ctx, "GET", c.u(nil, ws(name), "parent"), nil, &s)
}

func (c *Client) Checkpoints(ctx context.Context, name string) (cps []forkspace.Checkpoint, err error) {
	return cps, c.call(ctx, "GET", c.u(nil, ws(name), "checkpoints"), nil, &cps)
}

func (c *Client) Checkpoint(ctx context.Context, name, label string) (cp forkspace.Checkpoint, err error) {
	return cp, c.call(ctx, "POST", c.u(nil, ws(name), "checkpoints"), CheckpointRequest{Label: label}, &cp)
}

func (c *Client) Restore(ctx context.Context, name, cp string) error {
	return c.call(ctx, "POST", c.u(nil, ws(name), "restore"), RestoreRequest{Checkpoint: cp}, nil)
}

func (c *Client) Diff(ctx context.Context, from, to string, unified bool) (changes []vfs.Change, err error) {
	q := url.Values{"from": {from}, "to": {to}}
	if unified {
		q.Set("unified", "true")
	}
	return changes, c.call(ctx, "GET", c.u(q, "diff"), nil, &changes)
}

func (c *Client) Stat(ctx context.Context, state, p string) (e Entry, err error) {
	u, err := c.fileURL(nil, state, "stat", p)
	if err != nil {
		return e, err
	}
	return e, c.call(ctx, "GET", u, nil, &e)
}

func (c *Client) ReadDir(ctx context.Context, state, p string, r PageRequest) (d DirPage, err error) {
	u, err := c.fileURL(pageQuery(r), state, "dir", p)
	if err != nil {
		return d, err
	}
	return d, c.call(ctx, "GET", u, nil, &d)
}

func (c *Client) Open(ctx context.Context, state, p string, r ReadRequest) (*Download, error) {
	h := http.Header{}
	switch {
	case r.Suffix > 0:
		h.Set("Range", fmt.Sprintf("bytes=-%d", r.Suffix))
	case r.Ranged && r.Length >= 0:
		h.Set("Range", fmt.Sprintf("bytes=%d-%d", r.Offset, r.Offset+r.Length-1))
	case r.Ranged || r.Offset > 0:
		h.Set("Range", fmt.Sprintf("bytes=%d-", r.Offset))
	}
	if r.IfRange != "" {
		h.Set("If-Range", r.IfRange)
	}
	if len(r.IfNoneMatch) > 0 {
		h.Set("If-None-Match", strings.Join(r.IfNoneMatch, ", "))
	}
	u, err := c.fileURL(nil, state, "files", p)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, "GET", u, nil, h)
	if err != nil {
		return nil, err
	}
	d := &Download{ReadCloser: resp.Body, Length: resp.ContentLength, Ranged: resp.StatusCode == http.StatusPartialContent}
	d.Entry = Entry{Path: p, Type: "file", ETag: resp.Header.Get("ETag"), Size: resp.ContentLength, Mode: resp.Header.Get(ModeHeader)}
	if d.Ranged {
		var end int64
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-%d/%d", &d.Offset, &end, &d.Entry.Size); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("download %s: bad Content-Range %q", p, resp.Header.Get("Content-Range"))
		}
	}
	return d, nil
}

func (c *Client) Write(ctx context.Context, state, p string, body io.Reader, r WriteRequest) (e Entry, err error) {
	h := http.Header{"Content-Type": {"application/octet-stream"}}
	if len(r.IfMatch) > 0 {
		h.Set("If-Match", strings.Join(r.IfMatch, ", "))
	}
	if r.CreateOnly {
		h.Set("If-None-Match", "*")
	}
	q := url.Values{}
	if r.Perm != 0 {
		q.Set("mode", fmt.Sprintf("%04o", vfs.UnixMode(r.Perm)))
	}
	// The request must not close body (a caller's stdin, for one).
	u, err := c.fileURL(q, state, "files", p)
	if err != nil {
		return e, err
	}
	resp, err := c.do(ctx, "PUT", u, io.NopCloser(body), h)
	if err != nil {
		return e, err
	}
	defer resp.Body.Close()
	return e, json.NewDecoder(resp.Body).Decode(&e)
}

func (c *Client) Remove(ctx context.Context, state, p string, recursive bool) error {
	q := url.Values{}
	if recursive {
		q.Set("recursive", "true")
	}
	u, err := c.fileURL(q, state, "files", p)
	if err != nil {
		return err
	}
	return c.call(ctx, "DELETE", u, nil, nil)
}

func (c *Client) Rename(ctx context.Context, state, from, to string) error {
	return c.call(ctx, "POST", c.u(nil, ws(state), "rename"), RenameRequest{From: from, To: to}, nil)
}

func (c *Client) Mkdir(ctx context.Context, state, p string, parents bool) error {
	return c.call(ctx, "POST", c.u(nil, ws(state), "mkdir"), MkdirRequest{Path: p, Parents: parents}, nil)
}

func (c *Client) Glob(ctx context.Context, state string, r GlobRequest) (t ToolText, err error) {
	return t, c.call(ctx, "POST", c.u(nil, ws(state), "glob"), r, &t)
}

func (c *Client) Grep(ctx context.Context, state string, r GrepRequest) (t ToolText, err error) {
	return t, c.call(ctx, "POST", c.u(nil, ws(state), "grep"), r, &t)
}

func (c *Client) Exec(ctx context.Context, name string, r provider.ExecRequest, stdout, stderr io.Writer) (res provider.ExecResult, err error) {
	b, err := json.Marshal(r)
	if err != nil {
		return res, err
	}
	resp, err := c.do(ctx, "POST", c.u(nil, ws(name), "exec"), bytes.NewReader(b), http.Header{"Content-Type": {"application/json"}})
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev ExecEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return res, fmt.Errorf("exec: the server's stream ended without a result: %w", err)
		}
		switch {
		case ev.Error != nil:
			return res, ev.Error
		case ev.Result != nil:
			return res, json.Unmarshal(ev.Result, &res)
		case ev.Stdout != nil && stdout != nil:
			if _, err := stdout.Write(ev.Stdout); err != nil {
				return res, err
			}
		case ev.Stderr != nil && stderr != nil:
			if _, err := stderr.Write(ev.Stderr); err != nil {
				return res, err
			}
		}
	}
}

func (c *Client) ExecPolicy(ctx context.Context, name string) (p execpolicy.Policy, err error) {
	return p, c.call(ctx, "GET", c.u(nil, ws(name), "exec-policy"), nil, &p)
}

func (c *Client) SetExecPolicy(ctx context.Context, name string, p execpolicy.Policy) (out execpolicy.Policy, err error) {
	return out, c.call(ctx, "PUT", c.u(nil, ws(name), "exec-policy"), p, &out)
}

func (c *Client) Mounts(ctx context.Context, name string) (ms []forkspace.MountInfo, err error) {
	return ms, c.call(ctx, "GET", c.u(nil, ws(name), "mounts"), nil, &ms)
}

func (c *Client) MountAction(ctx context.Context, name string, action MountAction, root string) error {
	return c.call(ctx, "POST", c.u(nil, ws(name), "mounts", url.PathEscape(string(action))), MountRequest{Root: root}, nil)
}

func (c *Client) ResolveMount(ctx context.Context, name, p string, keepLocal bool) error {
	return c.call(ctx, "POST", c.u(nil, ws(name), "mounts", "resolve"), ResolveRequest{Path: p, KeepLocal: keepLocal}, nil)
}

func (c *Client) ImportTar(ctx context.Context, name, to string, tar io.Reader) (s TransferSummary, err error) {
	resp, err := c.do(ctx, "POST", c.u(url.Values{"to": {to}}, ws(name), "import"), io.NopCloser(tar), http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

func (c *Client) ExportTar(ctx context.Context, state, from string, w io.Writer) (TransferSummary, error) {
	s := TransferSummary{}
	resp, err := c.do(ctx, "GET", c.u(url.Values{"from": {from}}, ws(state), "export"), nil, nil)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return s, fmt.Errorf("export %s: %w", from, err)
	}
	s.Entries, _ = strconv.ParseInt(resp.Trailer.Get(EntriesTrailer), 10, 64)
	s.Bytes, _ = strconv.ParseInt(resp.Trailer.Get(BytesTrailer), 10, 64)
	s.Path, err = vfs.CleanPath(from)
	return s, err
}

func (c *Client) Audit(ctx context.Context, name string, f audit.Filter) (es []audit.Entry, err error) {
	q := url.Values{"limit": {strconv.Itoa(f.Limit)}}
	if name != "" {
		q.Set("workspace", name)
	}
	if f.Session != "" {
		q.Set("session", f.Session)
	}
	if f.Before != 0 {
		q.Set("before", strconv.FormatInt(f.Before, 10))
	}
	return es, c.call(ctx, "GET", c.u(q, "audit"), nil, &es)
}

func (c *Client) GC(ctx context.Context, r GCRequest) (res GCResult, err error) {
	return res, c.call(ctx, "POST", c.u(nil, "gc"), r, &res)
}

func (c *Client) Fsck(ctx context.Context) (*gc.CheckReport, error) {
	var r gc.CheckReport
	return &r, c.call(ctx, "POST", c.u(nil, "fsck"), nil, &r)
}

func (c *Client) DF(ctx context.Context) (d DF, err error) {
	return d, c.call(ctx, "GET", c.u(nil, "df"), nil, &d)
}
