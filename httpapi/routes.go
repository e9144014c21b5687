package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// route is one operation of the API: how the server registers it and how
// the OpenAPI document describes it. The document is generated from this
// table, so the two cannot drift apart.
type route struct {
	method, pattern string
	op, summary     string
	// need is what the route needs of the caller's token (tokens.go):
	// Server checks it before the handler runs, on {ws} when the pattern
	// has one. Every route must set it (TestRouteAccess).
	need       access
	params     []param
	in         reflect.Type // JSON request body (nil: none, or raw)
	inOptional bool
	raw        string // media type of a raw request body
	out        reflect.Type
	rawOut     string // media type of a raw response body
	ok         int
	more       []int // other statuses besides ok and the errors
	errs       []int
	handle     func(*Server, http.ResponseWriter, *http.Request) error
}

// param is a query or header parameter.
type param struct {
	name, in, typ, doc string
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Statuses every route documents: Guard's refusal (403), a token in the
// query string (400) and Authenticate's refusal (401). Errors the server
// did not expect (500) are the document's "default" response.
var common = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden}

var (
	pCursor = param{"cursor", "query", "string", "the next of the previous page"}
	pLimit  = param{"limit", "query", "integer", "most entries in the page (default 1000, at most 10000)"}
	wsState = "a workspace (name or ID), or WORKSPACE@CHECKPOINT for a read-only view"
)

// routes is set in init: its openapi route refers to the document built
// from it.
var routes []route

func init() {
	routes = slices.Concat(routeTable(), mergeRoutes(), tokenRoutes(), branchRoutes(), historyRoutes(), feedRoutes())
}

func routeTable() []route {
	return []route{
		{method: "GET", pattern: "/v1/openapi.json", op: "openapi", need: needToken, summary: "This document", ok: 200, rawOut: "application/json", handle: (*Server).openAPI},

		{method: "GET", pattern: "/v1/workspaces", op: "listWorkspaces", need: needRead, summary: "List workspaces by name, a page at a time",
			params: []param{pCursor, pLimit}, out: typeOf[WorkspacePage](), ok: 200, errs: []int{400}, handle: (*Server).listWorkspaces},
		{method: "POST", pattern: "/v1/workspaces", op: "createWorkspace", need: needWrite, summary: "Create an empty workspace (with a quota and mounts)",
			in: typeOf[CreateRequest](), out: typeOf[forkspace.Info](), ok: 201, errs: []int{409}, handle: (*Server).createWorkspace},
		{method: "GET", pattern: "/v1/workspaces/{ws}", op: "workspaceInfo", need: needRead, summary: "Describe a workspace: identity, lineage, quota, usage",
			out: typeOf[forkspace.Info](), ok: 200, handle: (*Server).workspaceInfo},
		{method: "DELETE", pattern: "/v1/workspaces/{ws}", op: "deleteWorkspace", need: needWrite, summary: "Delete a workspace and its checkpoints (forks are untouched)",
			ok: 204, handle: (*Server).deleteWorkspace},
		{method: "POST", pattern: "/v1/workspaces/{ws}/fork", op: "forkWorkspace", need: needRead, summary: "Fork a workspace's live state or a checkpoint (constant time)",
			in: typeOf[ForkRequest](), out: typeOf[forkspace.Info](), ok: 201, errs: []int{409}, handle: (*Server).forkWorkspace},
		{method: "GET", pattern: "/v1/workspaces/{ws}/parent", op: "parent", need: needRead, summary: "The state a workspace was forked from",
			out: typeOf[StateJSON](), ok: 200, handle: (*Server).parent},

		{method: "GET", pattern: "/v1/workspaces/{ws}/checkpoints", op: "listCheckpoints", need: needRead, summary: "List checkpoints, oldest first",
			out: typeOf[[]forkspace.Checkpoint](), ok: 200, handle: (*Server).checkpoints},
		{method: "POST", pattern: "/v1/workspaces/{ws}/checkpoints", op: "checkpoint", need: needWrite, summary: "Checkpoint the live state",
			in: typeOf[CheckpointRequest](), inOptional: true, out: typeOf[forkspace.Checkpoint](), ok: 201, errs: []int{403}, handle: (*Server).checkpoint},
		{method: "POST", pattern: "/v1/workspaces/{ws}/restore", op: "restore", need: needWrite, summary: "Point the workspace back at a checkpoint",
			in: typeOf[RestoreRequest](), out: typeOf[RestoreResult](), ok: 200, errs: []int{403}, handle: (*Server).restore},
		{method: "GET", pattern: "/v1/diff", op: "diff", need: needRead, summary: "Compare two states: JSON changes, or unified text with format=unified",
			params: []param{{"from", "query", "string", "the state compared from"}, {"to", "query", "string", "the state compared to"},
				{"unified", "query", "boolean", "add unified diffs of text files to the JSON"}, {"format", "query", "string", "json (default) or unified (text/x-diff)"}},
			out: typeOf[[]vfs.Change](), rawOut: "text/x-diff", ok: 200, errs: []int{400, 404}, handle: (*Server).diff},

		{method: "GET", pattern: "/v1/workspaces/{ws}/stat/{path...}", op: "stat", need: needRead, summary: "The attributes of one entry (not following a final link)",
			out: typeOf[Entry](), ok: 200, handle: (*Server).stat},
		{method: "GET", pattern: "/v1/workspaces/{ws}/dir/{path...}", op: "readDir", need: needRead, summary: "A page of a directory's entries, by name",
			params: []param{pCursor, pLimit}, out: typeOf[DirPage](), ok: 200, handle: (*Server).readDir},
		{method: "GET", pattern: "/v1/workspaces/{ws}/files/{path...}", op: "download", need: needRead, summary: "Download a file (Range, If-Range, If-None-Match; HEAD too)",
			params: []param{{"Range", "header", "string", "one byte range: bytes=A-B, bytes=A- or bytes=-N"}, {"If-None-Match", "header", "string", "ETags; a match is 304"}, {"If-Range", "header", "string", "the ETag the range is for"}},
			rawOut: "application/octet-stream", ok: 200, more: []int{206, 304}, errs: []int{416}, handle: (*Server).download},
		{method: "PUT", pattern: "/v1/workspaces/{ws}/files/{path...}", op: "upload", need: needWrite, summary: "Upload a file of any size, atomically (If-Match, If-None-Match: *)",
			params: []param{{"mode", "query", "string", "octal permission bits (default 0644)"}, {"If-Match", "header", "string", "ETags the file must have (* any file)"}, {"If-None-Match", "header", "string", "* creates only"}},
			raw:    "application/octet-stream", out: typeOf[Entry](), ok: 200, errs: []int{403, 412, 507}, handle: (*Server).upload},
		{method: "DELETE", pattern: "/v1/workspaces/{ws}/files/{path...}", op: "remove", need: needWrite, summary: "Remove a file, link or empty directory (recursive=true: a tree)",
			params: []param{{"recursive", "query", "boolean", "remove a directory and its contents"}}, ok: 204, errs: []int{403, 409}, handle: (*Server).remove},
		{method: "POST", pattern: "/v1/workspaces/{ws}/rename", op: "rename", need: needWrite, summary: "Move or rename an entry",
			in: typeOf[RenameRequest](), ok: 204, errs: []int{403}, handle: (*Server).rename},
		{method: "POST", pattern: "/v1/workspaces/{ws}/mkdir", op: "mkdir", need: needWrite, summary: "Create a directory (parents: and its parents)",
			in: typeOf[MkdirRequest](), ok: 204, errs: []int{403, 409}, handle: (*Server).mkdir},
		{method: "POST", pattern: "/v1/workspaces/{ws}/glob", op: "glob", need: needRead, summary: "Find paths matching a glob (the glob tool)",
			in: typeOf[GlobRequest](), out: typeOf[ToolText](), ok: 200, handle: (*Server).glob},
		{method: "POST", pattern: "/v1/workspaces/{ws}/grep", op: "grep", need: needRead, summary: "Search file contents (the grep tool)",
			in: typeOf[GrepRequest](), out: typeOf[ToolText](), ok: 200, handle: (*Server).grep},

		{method: "POST", pattern: "/v1/workspaces/{ws}/exec", op: "exec", need: needExec, summary: "Run a command in the sandbox; output streams as NDJSON events, the result last",
			in: typeOf[provider.ExecRequest](), out: typeOf[ExecEvent](), rawOut: "application/x-ndjson", ok: 200, handle: (*Server).exec},

		{method: "GET", pattern: "/v1/workspaces/{ws}/exec-policy", op: "execPolicy", need: needRead, summary: "The workspace's exec policy: network and limit caps of its commands (narrowed with the server's and the token's)",
			out: typeOf[execpolicy.Policy](), ok: 200, handle: (*Server).execPolicy},
		{method: "PUT", pattern: "/v1/workspaces/{ws}/exec-policy", op: "setExecPolicy", need: needAdmin, summary: "Replace the workspace's exec policy ({} clears it; a token sets only what is within its own)",
			in: typeOf[execpolicy.Policy](), out: typeOf[execpolicy.Policy](), ok: 200, handle: (*Server).setExecPolicy},

		{method: "GET", pattern: "/v1/workspaces/{ws}/mounts", op: "listMounts", need: needRead, summary: "List the workspace's mounts",
			out: typeOf[[]forkspace.MountInfo](), ok: 200, handle: (*Server).mounts},
		{method: "POST", pattern: "/v1/workspaces/{ws}/mounts/{action}", op: "mountAction", need: needWrite, summary: "flush, refresh or prefetch a mount root (every mount if none)",
			in: typeOf[MountRequest](), inOptional: true, ok: 204, errs: []int{409}, handle: (*Server).mountAction},
		{method: "POST", pattern: "/v1/workspaces/{ws}/mounts/resolve", op: "resolveMount", need: needWrite, summary: "Settle a write-back conflict",
			in: typeOf[ResolveRequest](), ok: 204, handle: (*Server).resolveMount},

		{method: "POST", pattern: "/v1/workspaces/{ws}/import", op: "importTar", need: needWrite, summary: "Unpack a tar archive (plain or gzip) into a directory, atomically",
			params: []param{{"to", "query", "string", "workspace directory (default the root)"}}, raw: "application/x-tar",
			out: typeOf[TransferSummary](), ok: 200, errs: []int{403, 507}, handle: (*Server).importTar},
		{method: "GET", pattern: "/v1/workspaces/{ws}/export", op: "exportTar", need: needRead, summary: "A PAX tar archive of a directory or file (trailers count it)",
			params: []param{{"from", "query", "string", "workspace path (default the root)"}}, rawOut: "application/x-tar", ok: 200, handle: (*Server).exportTar},

		{method: "GET", pattern: "/v1/audit", op: "auditLog", need: needRead, summary: "The audit log, newest first",
			params: []param{{"workspace", "query", "string", "only this workspace's calls"}, {"session", "query", "string", "only this session's calls"},
				{"limit", "query", "integer", "most entries (0: all)"}, {"before", "query", "integer", "only entries with seq below this"}},
			out: typeOf[[]audit.Entry](), ok: 200, errs: []int{400, 404}, handle: (*Server).auditLog},
		{method: "POST", pattern: "/v1/gc", op: "gc", need: needAdmin, summary: "Plan (dry_run) or run a garbage collection",
			in: typeOf[GCRequest](), out: typeOf[GCResult](), ok: 200, handle: (*Server).gc},
		{method: "POST", pattern: "/v1/fsck", op: "fsck", need: needAdmin, summary: "Verify every reachable object; damage is in the report",
			out: typeOf[gc.CheckReport](), ok: 200, handle: (*Server).fsck},
		{method: "GET", pattern: "/v1/df", op: "df", need: needAdmin, summary: "Space used: the store's and each workspace's",
			out: typeOf[DF](), ok: 200, handle: (*Server).df},
	}
}

// Statuses returns every status the document lists for method and the
// route pattern (ServeMux syntax).
func (rt route) statuses() []int {
	s := append([]int{rt.ok}, rt.more...)
	s = append(s, rt.errs...)
	s = append(s, common...)
	if strings.Contains(rt.pattern, "{ws}") {
		// A malformed state, a missing workspace.
		s = append(s, http.StatusBadRequest, http.StatusNotFound)
	}
	if rt.in != nil {
		// Malformed JSON, unknown fields; an oversized body.
		s = append(s, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

var (
	openAPIOnce sync.Once
	openAPIDoc  []byte
	openAPIErr  error
)

// OpenAPI returns the OpenAPI 3.1 document of the API.
func OpenAPI() ([]byte, error) {
	openAPIOnce.Do(func() { openAPIDoc, openAPIErr = buildOpenAPI() })
	return openAPIDoc, openAPIErr
}

var wildcard = regexp.MustCompile(`\{(\w+)(\.\.\.)?\}`)

func buildOpenAPI() ([]byte, error) {
	schemas := map[string]*jsonschema.Schema{}
	ref := func(t reflect.Type) (map[string]any, error) {
		name := t.Name()
		if t.Kind() == reflect.Slice {
			item, err := jsonschema.ForType(t.Elem(), &jsonschema.ForOptions{IgnoreInvalidTypes: true})
			if err != nil {
				return nil, err
			}
			schemas[t.Elem().Name()] = item
			return map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/" + t.Elem().Name()}}, nil
		}
		s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
		if err != nil {
			return nil, err
		}
		schemas[name] = s
		return map[string]any{"$ref": "#/components/schemas/" + name}, nil
	}
	errSchema, err := ref(typeOf[apiError]())
	if err != nil {
		return nil, err
	}
	paths := map[string]map[string]any{}
	for _, rt := range routes {
		p := wildcard.ReplaceAllString(rt.pattern, "{$1}")
		op := map[string]any{"operationId": rt.op, "summary": rt.summary}
		var params []map[string]any
		for _, m := range wildcard.FindAllStringSubmatch(rt.pattern, -1) {
			doc := wsState
			if m[1] == "path" {
				doc = "a workspace path (empty: the root; '..' may not leave the workspace)"
			} else if m[1] == "action" {
				doc = "flush, refresh or prefetch"
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": doc, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.params {
			params = append(params, map[string]any{"name": q.name, "in": q.in, "description": q.doc, "schema": map[string]any{"type": q.typ}})
		}
		if params != nil {
			op["parameters"] = params
		}
		switch {
		case rt.in != nil:
			s, err := ref(rt.in)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": !rt.inOptional, "content": map[string]any{"application/json": map[string]any{"schema": s}}}
		case rt.raw != "":
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.raw: map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}}
		}
		responses := map[string]any{}
		for _, st := range rt.statuses() {
			resp := map[string]any{"description": http.StatusText(st)}
			switch {
			case st == rt.ok || st == http.StatusPartialContent:
				content := map[string]any{}
				if rt.out != nil {
					s, err := ref(rt.out)
					if err != nil {
						return nil, err
					}
					mt := "application/json"
					if streamed(rt.rawOut) {
						mt = rt.rawOut
					}
					content[mt] = map[string]any{"schema": s}
				}
				if rt.rawOut != "" && !streamed(rt.rawOut) {
					content[rt.rawOut] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
				}
				if len(content) > 0 && st != http.StatusNoContent {
					resp["content"] = content
				}
			case st >= 400:
				resp["content"] = map[string]any{"application/json": map[string]any{"schema": errSchema}}
			}
			responses[strconv.Itoa(st)] = resp
		}
		responses["default"] = map[string]any{"description": "an unexpected error", "content": map[string]any{"application/json": map[string]any{"schema": errSchema}}}
		op["responses"] = responses
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		method := map[string]string{"GET": "get", "POST": "post", "PUT": "put", "DELETE": "delete"}[rt.method]
		paths[p][method] = op
		if rt.method == "GET" && rt.rawOut == "application/octet-stream" {
			head := maps(op)
			head["operationId"] = rt.op + "Head"
			paths[p]["head"] = head
		}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "forkspace", "version": "1",
			"description": "Durable, forkable workspaces: the REST API of `forkspace serve`. Errors are {code, message, path}."},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// streamed reports whether a response's media type is a stream of
// values of its out type (NDJSON, Server-Sent Events).
func streamed(mediaType string) bool {
	return mediaType == "application/x-ndjson" || mediaType == "text/event-stream"
}

// maps copies a map one level deep.
func maps(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// DocumentedStatuses lists "METHOD PATTERN STATUS" for every status the
// OpenAPI document gives an operation (HEAD operations as GET, which
// serves them).
func DocumentedStatuses() []string {
	var out []string
	for _, rt := range routes {
		for _, st := range rt.statuses() {
			out = append(out, rt.method+" "+rt.pattern+" "+strconv.Itoa(st))
		}
	}
	return out
}

// Routes lists "METHOD PATTERN" of every registered route, HEAD included
// where GET serves it (as the OpenAPI document lists them).
func Routes() []string {
	var out []string
	for _, rt := range routes {
		out = append(out, rt.method+" "+rt.pattern)
		if rt.method == "GET" && rt.rawOut == "application/octet-stream" {
			out = append(out, "HEAD "+rt.pattern)
		}
	}
	return out
}
