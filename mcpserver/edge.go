package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes bounds one MCP message sent over HTTP (the SDK's
// default). A larger tools/call is answered with a tool error naming the
// limit, so the client's session goes on; the write tool's schema says
// so.
const MaxRequestBytes = mcp.DefaultMaxRequestBodyBytes

// answerAtEdge makes the HTTP transport answer in JSON-RPC where the SDK
// answers in HTTP: a request over MaxRequestBytes gets a tool error (for
// tools/call) or a JSON-RPC "invalid request" error instead of HTTP 413,
// and a request for a method the server does not have gets JSON-RPC's
// "method not found" instead of HTTP 400. Both are read without holding
// more than MaxRequestBytes in memory.
func answerAtEdge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
		if err != nil {
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		if len(head) > MaxRequestBytes {
			c, _ := peekCall(io.MultiReader(bytes.NewReader(head), r.Body))
			tooLarge(w, c)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(head))
		msg, err := jsonrpc.DecodeMessage(head)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.ID.IsValid() {
			next.ServeHTTP(w, r)
			return
		}
		rec := &refusal{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == http.StatusBadRequest && strings.HasPrefix(rec.body.String(), "JSON RPC not handled") {
			writeJSONRPC(w, req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", req.Method)})
		} else {
			rec.flushHeld()
		}
	})
}

// tooLarge answers a request over MaxRequestBytes.
func tooLarge(w http.ResponseWriter, c call) {
	id, err := jsonrpc.MakeID(nil)
	var raw any
	if c.ID != nil && json.Unmarshal(c.ID, &raw) == nil {
		id, err = jsonrpc.MakeID(raw)
	}
	if err != nil || !id.IsValid() {
		http.Error(w, fmt.Sprintf("an MCP message is at most %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
		return
	}
	limit := fmt.Sprintf("%d MiB", MaxRequestBytes>>20)
	if c.Method == "tools/call" {
		text := fmt.Sprintf("the %s call is larger than the %s limit of one MCP request; nothing was done. "+
			"Split the content into smaller files, or have the file uploaded through the REST API "+
			"(PUT /v1/workspaces/{workspace}/files/{path}) or `forkspace put`, which take files of any size.", c.Tool, limit)
		res := mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		writeJSONRPC(w, id, &res, nil)
		return
	}
	writeJSONRPC(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the %s request is larger than the %s limit of one MCP message", c.Method, limit)})
}

// writeJSONRPC writes one JSON-RPC response as the HTTP reply.
func writeJSONRPC(w http.ResponseWriter, id jsonrpc.ID, result any, rpcErr *jsonrpc.Error) {
	resp := &jsonrpc.Response{ID: id}
	if rpcErr != nil {
		resp.Error = rpcErr
	} else {
		b, err := json.Marshal(result)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp.Result = b
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// refusal passes a response through unless it is an HTTP 400, which it
// holds so that answerAtEdge can rewrite the SDK's refusals.
type refusal struct {
	http.ResponseWriter
	status int
	held   bool
	body   bytes.Buffer
}

func (r *refusal) WriteHeader(code int) {
	if r.status != 0 {
		return
	}
	r.status = code
	if code == http.StatusBadRequest {
		r.held = true
		return
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *refusal) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.held {
		return r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// flushHeld sends a held response unchanged.
func (r *refusal) flushHeld() {
	if r.held {
		r.ResponseWriter.WriteHeader(r.status)
		r.ResponseWriter.Write(r.body.Bytes())
	}
}

func (r *refusal) Flush() {
	if !r.held {
		http.NewResponseController(r.ResponseWriter).Flush()
	}
}

func (r *refusal) Unwrap() http.ResponseWriter { return r.ResponseWriter }
