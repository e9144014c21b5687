package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Draining wraps a stream transport (stdio) so that the end of its input
// does not drop requests: once the client's input ends, the connection
// reports it only after every request read so far has been answered or
// cancelled by the client. Without it, requests a client writes just
// before closing its end are neither answered nor executed. A request the
// client cancels (notifications/cancelled) is not answered, as the MCP
// specification asks: its handler's context ends and the error it
// returns is dropped.
func Draining(t mcp.Transport) mcp.Transport { return drainingTransport{t} }

type drainingTransport struct{ mcp.Transport }

func (d drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	dc := &drainingConn{Connection: c, open: map[string]bool{}, cancelled: map[string]bool{}}
	dc.idle = sync.NewCond(&dc.mu)
	return dc, nil
}

type drainingConn struct {
	mcp.Connection
	mu        sync.Mutex
	idle      *sync.Cond      // broadcast when open shrinks or the connection closes
	open      map[string]bool // IDs of requests read and not yet answered
	cancelled map[string]bool // IDs of those the client cancelled
	isClosed  bool
}

// idKey makes request IDs comparable across their decoded forms (a
// number may come back as int64 or float64).
func idKey(v any) string { return fmt.Sprintf("%v", v) }

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		stop := context.AfterFunc(ctx, c.wake)
		defer stop()
		c.mu.Lock()
		for len(c.open) > 0 && !c.isClosed && ctx.Err() == nil {
			c.idle.Wait()
		}
		c.mu.Unlock()
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		if req.ID.IsValid() {
			c.open[idKey(req.ID.Raw())] = true
		} else if req.Method == "notifications/cancelled" {
			var p mcp.CancelledParams
			if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil && c.open[idKey(p.RequestID)] {
				delete(c.open, idKey(p.RequestID))
				c.cancelled[idKey(p.RequestID)] = true
				c.idle.Broadcast()
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return c.Connection.Write(ctx, msg)
	}
	key := idKey(resp.ID.Raw())
	c.mu.Lock()
	cancelled := c.cancelled[key]
	delete(c.cancelled, key)
	c.mu.Unlock()
	var err error
	if !cancelled {
		err = c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	delete(c.open, key)
	c.idle.Broadcast()
	c.mu.Unlock()
	return err
}

func (c *drainingConn) Close() error {
	c.mu.Lock()
	if !c.isClosed {
		c.isClosed = true
		c.idle.Broadcast()
	}
	c.mu.Unlock()
	return c.Connection.Close()
}

func (c *drainingConn) wake() {
	c.mu.Lock()
	c.idle.Broadcast()
	c.mu.Unlock()
}
