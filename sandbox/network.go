package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/execpolicy"
)

// ErrNetworkDenied is returned by Exec for a request that asks for the
// network when the run's policy (the server's, the workspace's and the
// token's, narrowed: execpolicy) is off. It matches fs.ErrPermission.
var ErrNetworkDenied = fmt.Errorf("network access is off by the operator's policy: %w", fs.ErrPermission)

// sandboxNet is the address plan of slirp4netns inside the sandbox.
const (
	sandboxGateway = "10.0.2.2" // slirp's router: the host, loopback refused
	sandboxDNS     = "10.0.2.3"
)

// netRun is one run's network: slirp4netns attached to the sandbox's
// network namespace (user-mode networking: the sandbox's packets become
// ordinary sockets of the host process, with --disable-host-loopback), and
// nft rules inside that namespace, applied before the command starts.
type netRun struct {
	policy execpolicy.Network
	// allow is the resolved allowlist (execpolicy.Allow); deny the host's own
	// addresses (execpolicy.Full).
	allow []netip.AddrPort
	deny  []netip.Addr
	// hosts maps allowlisted names to addresses for /etc/hosts.
	hosts map[string][]netip.Addr

	slirp *exec.Cmd
	exitW *os.File   // closing it stops slirp4netns
	done  chan error // attach's result; nil until start
}

// newNetRun resolves the policy for one run. Only IPv4 is routed (slirp4netns
// without IPv6).
func newNetRun(ctx context.Context, p execpolicy.Network) (*netRun, error) {
	for _, tool := range []string{"slirp4netns", "nft", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("exec: network: %s not found (Debian packages slirp4netns, nftables, util-linux): %w: %w", tool, errors.ErrUnsupported, err)
		}
	}
	n := &netRun{policy: p, hosts: map[string][]netip.Addr{}}
	switch p.Mode {
	case execpolicy.Full:
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return nil, fmt.Errorf("exec: network: host addresses: %w", err)
		}
		for _, a := range addrs {
			if pfx, err := netip.ParsePrefix(a.String()); err == nil && pfx.Addr().Is4() {
				n.deny = append(n.deny, pfx.Addr())
			}
		}
	case execpolicy.Allow:
		for _, hp := range p.Allow {
			host, port, _ := net.SplitHostPort(hp)
			pn, _ := strconv.Atoi(port)
			addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
			if err != nil {
				return nil, fmt.Errorf("exec: network: resolve %s: %w", host, err)
			}
			for _, a := range addrs {
				n.allow = append(n.allow, netip.AddrPortFrom(a.Unmap(), uint16(pn)))
				if _, err := netip.ParseAddr(host); err != nil && !slices.Contains(n.hosts[host], a.Unmap()) {
					n.hosts[host] = append(n.hosts[host], a.Unmap())
				}
			}
		}
	}
	return n, nil
}

// etcFiles returns the sandbox's /etc/resolv.conf and /etc/hosts.
func (n *netRun) etcFiles() map[string]string {
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost\n"
	names := make([]string, 0, len(n.hosts))
	for h := range n.hosts {
		names = append(names, h)
	}
	slices.Sort(names)
	for _, h := range names {
		for _, a := range n.hosts[h] {
			hosts += a.String() + "\t" + h + "\n"
		}
	}
	resolv := "nameserver " + sandboxDNS + "\n"
	if n.policy.Mode == execpolicy.Allow {
		resolv = "# no DNS: allowlisted names are in /etc/hosts\n"
	}
	return map[string]string{"resolv.conf": resolv, "hosts": hosts}
}

// ruleset returns the nft rules of the sandbox's namespace: the host's own
// addresses dropped (execpolicy.Full), or only the allowlist accepted
// (execpolicy.Allow). The command has no capability to change them.
func (n *netRun) ruleset() string {
	var b strings.Builder
	b.WriteString("table inet forkspace {\n\tchain output {\n\t\ttype filter hook output priority 0;")
	if n.policy.Mode == execpolicy.Allow {
		b.WriteString(" policy drop;\n\t\toifname \"lo\" accept\n\t\tct state established,related accept\n")
		for _, ap := range n.allow {
			fmt.Fprintf(&b, "\t\tip daddr %s meta l4proto { tcp, udp } th dport %d accept\n", ap.Addr(), ap.Port())
		}
	} else {
		b.WriteString(" policy accept;\n")
		fmt.Fprintf(&b, "\t\tip daddr %s drop\n", sandboxGateway)
		for _, a := range n.deny {
			fmt.Fprintf(&b, "\t\tip daddr %s drop\n", a)
		}
		b.WriteString("\t\tip6 daddr != ::1 drop\n")
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// start serves bubblewrap's info and block pipes (attach) in the
// background.
func (n *netRun) start(info, block *os.File) {
	n.done = make(chan error, 1)
	go n.attach(info, block)
}

// attach waits for bubblewrap to report its child (info), then brings up
// slirp4netns and the nft rules in the child's network namespace, and
// releases the command (block). When anything fails the child is killed
// before the command starts and the error is reported by wait.
func (n *netRun) attach(info, block *os.File) {
	defer block.Close() // releases bubblewrap: EOF if nothing was written
	defer info.Close()
	pid, err := childPid(info)
	if err == nil {
		err = waitBlocked(pid)
	}
	if err == nil {
		err = n.configure(pid)
		if err != nil {
			syscall.Kill(pid, syscall.SIGKILL)
		} else {
			_, err = block.Write([]byte{1})
		}
	}
	n.done <- err
}

// childPid reads bubblewrap's --info-fd document up to its child's pid.
func childPid(info io.Reader) (int, error) {
	var doc struct {
		Pid int `json:"child-pid"`
	}
	var buf []byte
	for {
		b := make([]byte, 512)
		k, err := info.Read(b)
		buf = append(buf, b[:k]...)
		if bytes.Contains(buf, []byte("}")) {
			if err := json.Unmarshal(buf, &doc); err != nil || doc.Pid <= 0 {
				return 0, fmt.Errorf("exec: network: bwrap info %q: %v", buf, err)
			}
			return doc.Pid, nil
		}
		if err != nil {
			return 0, fmt.Errorf("exec: network: bwrap exited before starting the command: %w", err)
		}
	}
}

// waitBlocked waits until bubblewrap's child has set up its namespaces
// and sits in read(blockFD): before that its own loopback setup and
// slirp4netns's would race on the namespace's netlink.
func waitBlocked(pid int) error {
	want := fmt.Sprintf("%d 0x%x ", unix.SYS_READ, blockFD)
	for deadline := time.Now().Add(setupWait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
		if err != nil {
			return fmt.Errorf("exec: network: bwrap's child exited during setup: %w", err)
		}
		if strings.HasPrefix(string(b), want) {
			return nil
		}
	}
	return fmt.Errorf("exec: network: bwrap's child did not finish its setup in %s", setupWait)
}

// setupWait bounds bubblewrap's setup before the network is attached.
const setupWait = 30 * time.Second

// configure starts slirp4netns for pid's network namespace and applies
// the rules. Both work through descriptors of the namespace and of the
// user namespace that owns it (NS_GET_USERNS), opened once here: by pid,
// slirp4netns and nsenter would join the child's user namespace, which is
// already the nested one of --disable-userns and does not own the network
// namespace.
func (n *netRun) configure(pid int) error {
	netns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return fmt.Errorf("exec: network: %w", err)
	}
	defer netns.Close()
	fd, err := unix.IoctlRetInt(int(netns.Fd()), unix.NS_GET_USERNS)
	if err != nil {
		return fmt.Errorf("exec: network: owner of the sandbox's network namespace: %w", err)
	}
	userns := os.NewFile(uintptr(fd), "userns")
	defer userns.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer readyR.Close()
	exitR, exitW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return err
	}
	n.exitW = exitW
	// Descriptors in slirp4netns and nsenter: 3 the network namespace, 4
	// its user namespace, then slirp's ready and exit pipes.
	const nsPaths = "/proc/self/fd/3"
	args := []string{"--configure", "--mtu=65520", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp",
		"--netns-type=path", "--userns-path=/proc/self/fd/4", "--ready-fd=5", "--exit-fd=6"}
	if n.policy.Mode == execpolicy.Allow {
		args = append(args, "--disable-dns")
	}
	var stderr bytes.Buffer
	n.slirp = exec.Command("slirp4netns", append(args, nsPaths, "tap0")...)
	n.slirp.ExtraFiles = []*os.File{netns, userns, readyW, exitR}
	n.slirp.Stderr = &stderr
	n.slirp.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = n.slirp.Start()
	readyW.Close()
	exitR.Close()
	if err != nil {
		n.slirp = nil
		return fmt.Errorf("exec: network: start slirp4netns: %w", err)
	}
	if k, _ := readyR.Read(make([]byte, 1)); k != 1 {
		n.slirp.Process.Kill()
		n.slirp.Wait()
		n.slirp = nil
		return fmt.Errorf("exec: network: slirp4netns failed: %s", strings.TrimSpace(stderr.String()))
	}
	enter := []string{"--user=/proc/self/fd/4", "--net=/proc/self/fd/3", "--preserve-credentials"}
	if hostUIDs() {
		// Root holds CAP_NET_ADMIN over every network namespace already;
		// in the user namespace of the run's host uid it is unmapped, and
		// nft fails there.
		enter = enter[1:2]
	}
	nft := exec.Command("nsenter", append(enter, "nft", "-f", "-")...)
	nft.ExtraFiles = []*os.File{netns, userns}
	nft.Stdin = strings.NewReader(n.ruleset())
	if out, err := nft.CombinedOutput(); err != nil {
		return fmt.Errorf("exec: network: nft rules in the sandbox: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// stop ends slirp4netns and returns what attach reported (nil when
// bubblewrap never started).
func (n *netRun) stop() error {
	var err error
	if n.done != nil {
		err = <-n.done
	}
	if n.exitW != nil {
		n.exitW.Close()
	}
	if n.slirp != nil {
		n.slirp.Wait()
	}
	return err
}
