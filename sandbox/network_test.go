package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/provider"
)

// netnsServer starts an HTTP server in a network namespace the test
// creates, reachable from the host through a veth pair, and returns its
// address (a test host of ours: the only non-loopback address the
// sandbox tests talk to). The namespace, the link and the server go
// away with the test.
func netnsServer(t *testing.T, ports ...int) string {
	t.Helper()
	needPython(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("ip is required (Debian package iproute2; scripts/test.sh installs it): %v", err)
	}
	id := os.Getpid()%200 + 20
	ns := fmt.Sprintf("fstest-%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	host, peer := fmt.Sprintf("fsh%d", time.Now().UnixNano()%100000), fmt.Sprintf("fsp%d", time.Now().UnixNano()%100000)
	hostIP, nsIP := fmt.Sprintf("10.213.%d.1", id), fmt.Sprintf("10.213.%d.2", id)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	run("link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
	t.Cleanup(func() { exec.Command("ip", "link", "del", host).Run() })
	run("addr", "add", hostIP+"/30", "dev", host)
	run("link", "set", host, "up")
	run("-n", ns, "addr", "add", nsIP+"/30", "dev", peer)
	run("-n", ns, "link", "set", peer, "up")
	run("-n", ns, "link", "set", "lo", "up")
	for _, port := range ports {
		srv := exec.Command("ip", "netns", "exec", ns, "python3", "-m", "http.server", "--bind", nsIP, fmt.Sprint(port))
		srv.Dir = t.TempDir()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		waitListening(t, fmt.Sprintf("%s:%d", nsIP, port))
	}
	return nsIP
}

// waitListening waits until addr accepts a connection from the host.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for range 200 {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never listened", addr)
}

// fetchScript tries each URL from inside the sandbox and prints "REACHED
// url" or "FAILED url".
func fetchScript(urls ...string) string {
	return `python3 - ` + strings.Join(urls, " ") + ` <<'EOF'
import sys, urllib.request
for url in sys.argv[1:]:
    try:
        urllib.request.urlopen(url, timeout=3).read()
        print("REACHED", url)
    except Exception as e:
        print("FAILED", url, e)
EOF`
}

// hostServers serves HTTP on the host's loopback (where forkspace serve
// listens by default) and on every interface, and returns the URLs the
// sandbox could try to reach them by: 127.0.0.1, slirp's gateway (the
// host) and each of the host's own IPv4 addresses.
func hostServers(t *testing.T) []string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret") })
	lo := httptest.NewServer(h)
	t.Cleanup(lo.Close)
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	all := &http.Server{Handler: h}
	go all.Serve(l)
	t.Cleanup(func() { all.Close() })
	loPort := lo.Listener.Addr().(*net.TCPAddr).Port
	allPort := l.Addr().(*net.TCPAddr).Port
	urls := []string{lo.URL, fmt.Sprintf("http://%s:%d", sandboxGateway, loPort), fmt.Sprintf("http://%s:%d", sandboxGateway, allPort)}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			urls = append(urls, fmt.Sprintf("http://%s:%d", ipn.IP, allPort))
		}
	}
	return urls
}

// TestNetworkDeniedByPolicy is the regression test of the model deciding
// networking: with the default policy (off) a request for the network is
// refused before anything runs, and the sandbox has only its loopback.
func TestNetworkDeniedByPolicy(t *testing.T) {
	s, ws := newShell(t, Options{})
	_, err := s.Exec(context.Background(), provider.ExecRequest{Command: "touch ran", Network: true})
	if !errors.Is(err, ErrNetworkDenied) || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Exec with Network under policy off = %v, want ErrNetworkDenied", err)
	}
	if _, ok := readWS(t, ws, "ran"); ok {
		t.Error("the command ran")
	}
	urls := hostServers(t)
	res := mustExec(t, s, "cat /proc/net/dev; "+fetchScript(urls...))
	if strings.Contains(res.Stdout, "REACHED") || strings.Contains(res.Stdout, "tap0") {
		t.Errorf("without the network:\n%s", res.Stdout)
	}
}

// TestNetworkFullNotHost: with the network on (policy full), the sandbox
// reaches a test host in its own namespace, but not the host: neither its
// loopback (where forkspace serve listens) nor its own addresses.
func TestNetworkFullNotHost(t *testing.T) {
	s, _ := newShell(t, Options{Network: execpolicy.Network{Mode: execpolicy.Full}})
	remote := netnsServer(t, 8080)
	urls := hostServers(t)
	res, err := s.Exec(context.Background(), provider.ExecRequest{Command: fetchScript(append(urls, "http://"+remote+":8080/")...), Network: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		if strings.Contains(res.Stdout, "REACHED "+u) {
			t.Errorf("the sandbox reached the host at %s", u)
		}
	}
	if !strings.Contains(res.Stdout, "REACHED http://"+remote+":8080/") {
		t.Errorf("the test host is unreachable with the network on:\n%s%s", res.Stdout, res.Stderr)
	}
	// The same shell without asking: no network.
	res = mustExec(t, s, fetchScript("http://"+remote+":8080/"))
	if strings.Contains(res.Stdout, "REACHED") {
		t.Errorf("the network without asking for it:\n%s", res.Stdout)
	}
}

// TestNetworkAllowlist: only the listed host:port is reachable.
func TestNetworkAllowlist(t *testing.T) {
	remote := netnsServer(t, 8080, 8081)
	policy, err := execpolicy.ParseNetwork(remote + ":8080")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newShell(t, Options{Network: policy})
	urls := hostServers(t)
	listed, unlisted := "http://"+remote+":8080/", "http://"+remote+":8081/"
	res, err := s.Exec(context.Background(), provider.ExecRequest{Command: fetchScript(append(urls, listed, unlisted)...), Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "REACHED "+listed) {
		t.Errorf("the listed address is unreachable:\n%s%s", res.Stdout, res.Stderr)
	}
	for _, u := range append(urls, unlisted) {
		if strings.Contains(res.Stdout, "REACHED "+u) {
			t.Errorf("reached %s, which the allowlist does not name", u)
		}
	}
}

// TestAllowlistNames: an allowlisted name is resolved on the host when a
// run starts; the sandbox gets it in /etc/hosts, no DNS, and rules that
// accept exactly its addresses at that port.
func TestAllowlistNames(t *testing.T) {
	policy, err := execpolicy.ParseNetwork("localhost:8080,192.0.2.7:443")
	if err != nil {
		t.Fatal(err)
	}
	n, err := newNetRun(context.Background(), policy)
	if err != nil {
		t.Fatal(err)
	}
	etc := n.etcFiles()
	if etc["hosts"] != "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.0.1\tlocalhost\n" {
		t.Errorf("hosts:\n%s", etc["hosts"])
	}
	if strings.Contains(etc["resolv.conf"], "nameserver") {
		t.Errorf("resolv.conf with an allowlist:\n%s", etc["resolv.conf"])
	}
	rules := n.ruleset()
	for _, want := range []string{"policy drop;", "ip daddr 127.0.0.1 meta l4proto { tcp, udp } th dport 8080 accept",
		"ip daddr 192.0.2.7 meta l4proto { tcp, udp } th dport 443 accept"} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules lack %q:\n%s", want, rules)
		}
	}
}

// TestNetworkPolicyLevels: a run's network is the narrowest of the
// server's, the workspace's and the caller's token's. Under a full
// server a workspace allowlist leaves only its pair reachable; a token
// with the network off gets none (refused before anything runs) even
// though the server and the workspace allow it; a token that lists
// another pair cannot widen the workspace's list (their intersection is
// empty: off). Limits narrow the same way: the smallest cap wins.
func TestNetworkPolicyLevels(t *testing.T) {
	remote := netnsServer(t, 8080, 8081)
	listed, unlisted := "http://"+remote+":8080/", "http://"+remote+":8081/"
	s, ws := newShell(t, Options{Network: execpolicy.Network{Mode: execpolicy.Full}})
	ctx := context.Background()
	allow, err := execpolicy.ParseNetwork(remote + ":8080")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.SetExecPolicy(ctx, execpolicy.Policy{Network: &allow, Limits: provider.Limits{Memory: 300 << 20}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(ctx, provider.ExecRequest{Command: fetchScript(listed, unlisted), Network: true, Limits: provider.Limits{Memory: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "REACHED "+listed) || strings.Contains(res.Stdout, "REACHED "+unlisted) {
		t.Errorf("workspace allowlist under a full server:\n%s%s", res.Stdout, res.Stderr)
	}
	if res.Limits.Memory != 300<<20 {
		t.Errorf("memory limit %d, want the workspace's cap %d", res.Limits.Memory, 300<<20)
	}

	off := execpolicy.Network{}
	other, _ := execpolicy.ParseNetwork(remote + ":8081")
	for name, tok := range map[string]execpolicy.Policy{"off": {Network: &off}, "another pair": {Network: &other}} {
		tctx := auth.WithScope(ctx, auth.Scope{TokenID: "tk", Tenant: auth.AnyTenant, Pattern: "*", Perms: auth.All, Exec: tok})
		_, err := s.Exec(tctx, provider.ExecRequest{Command: "touch ran-" + name, Network: true})
		if !errors.Is(err, ErrNetworkDenied) {
			t.Errorf("token with network %s: Exec = %v, want ErrNetworkDenied", name, err)
		}
		if _, ok := readWS(t, ws, "ran-"+name); ok {
			t.Errorf("token with network %s: the command ran", name)
		}
	}
	// A token's smaller cap wins over the workspace's.
	tctx := auth.WithScope(ctx, auth.Scope{TokenID: "tk", Tenant: auth.AnyTenant, Pattern: "*", Perms: auth.All,
		Exec: execpolicy.Policy{Limits: provider.Limits{Memory: 200 << 20}}})
	res, err = s.Exec(tctx, provider.ExecRequest{Command: "true"})
	if err != nil || res.Limits.Memory != 200<<20 {
		t.Errorf("token cap: %v, memory %d, want %d", err, res.Limits.Memory, 200<<20)
	}
	// A token cannot set a workspace policy wider than its own.
	full := execpolicy.Network{Mode: execpolicy.Full}
	if err := ws.SetExecPolicy(auth.WithScope(ctx, auth.Scope{Exec: execpolicy.Policy{Network: &off}}), execpolicy.Policy{Network: &full}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("token with network off widening the workspace: %v, want fs.ErrPermission", err)
	}
	if p, err := ws.ExecPolicy(ctx); err != nil || p.Network.String() != allow.String() {
		t.Errorf("workspace policy after a refused change: %v, %v", p, err)
	}
	// A fork keeps the workspace's policy.
	fork, err := ws.Fork(ctx, "policy-fork", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := fork.ExecPolicy(ctx); err != nil || p.String() != "network "+allow.String()+", memory ≤ 314572800" {
		t.Errorf("fork's policy: %v, %v", p, err)
	}
}
