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
	s, _ := newShell(t, Options{Network: NetworkPolicy{Mode: NetworkFull}})
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
	policy, err := ParseNetwork(remote + ":8080")
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

func TestParseNetwork(t *testing.T) {
	for in, want := range map[string]string{"": "off", "off": "off", "full": "full",
		"example.org:443": "example.org:443", " a:1, 10.0.0.1:22 ": "a:1,10.0.0.1:22", "[::1]:80": "[::1]:80"} {
		p, err := ParseNetwork(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseNetwork(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"on", "host", "host:0", "host:65536", ":80", "a:1,,b:2", "a b:80"} {
		if _, err := ParseNetwork(in); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("ParseNetwork(%q) = %v, want fs.ErrInvalid", in, err)
		}
	}
}

// TestAllowlistNames: an allowlisted name is resolved on the host when a
// run starts; the sandbox gets it in /etc/hosts, no DNS, and rules that
// accept exactly its addresses at that port.
func TestAllowlistNames(t *testing.T) {
	policy, err := ParseNetwork("localhost:8080,192.0.2.7:443")
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
