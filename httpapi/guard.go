package httpapi

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Guard wraps h with the checks every route of a server gets, before any
// handler runs:
//
//   - a request reaching a loopback listener must name a loopback host in
//     its Host header (DNS rebinding: a page of evil.example resolved to
//     127.0.0.1 sends Host: evil.example);
//   - a request with an Origin header (a browser's cross-origin fetch or
//     form post) must come from the origin it is addressed to: scheme
//     http or https and the same host and port as the Host header. "null"
//     and every other origin are foreign.
//
// Refusals are 403 with the JSON error shape (code "forbidden").
func Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := foreign(r); msg != "" {
			writeError(w, r, http.StatusForbidden, apiError{Code: CodeForbidden, Message: msg})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// foreign says why r is refused ("" when it is not).
func foreign(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(local.String()) && !isLoopback(r.Host) {
		return "host " + quoteShort(r.Host) + " is not a loopback name: this server listens on loopback only"
	}
	origin, ok := r.Header["Origin"]
	if !ok {
		return ""
	}
	if len(origin) != 1 {
		return "more than one Origin header"
	}
	u, err := url.Parse(origin[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return "origin " + quoteShort(origin[0]) + " is not this server's (" + quoteShort(r.Host) + "): cross-origin requests are refused"
	}
	return ""
}

// isLoopback reports whether hostport (a host, or host:port) is a
// loopback address or the name localhost.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// LoopbackAddr reports whether a listener on addr (host:port, as given to
// net.Listen) would accept connections from this host alone: the host is
// a loopback address, or a name (localhost included) all of whose
// addresses are. An empty host and the unspecified addresses (0.0.0.0,
// ::) are not. It resolves names but binds nothing.
func LoopbackAddr(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("address %q: %w: %w", addr, fs.ErrInvalid, err)
	}
	if host == "" {
		return false, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false, fmt.Errorf("address %q: %w", addr, err)
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}

// quoteShort quotes s, cut to 100 bytes.
func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
