package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/forkspace/forkspace/provider"
)

// SandboxUID is the uid and gid commands run as inside the sandbox's user
// namespace (user "sandbox"), unless Options.Root. The namespace maps it to
// the uid forkspace runs as, and nothing else: files the command creates
// in the work dir belong on the host to forkspace's user, the work dir's
// owner (see the package documentation).
const SandboxUID = 1000

// ErrUnconfined is returned by Exec when the host cannot apply the
// sandbox's confinement (user namespace, no capabilities, seccomp filter):
// the command is refused rather than run with more power. It matches
// errors.ErrUnsupported too.
var ErrUnconfined = fmt.Errorf("sandbox: confinement unavailable (bubblewrap needs user namespaces and seccomp): %w", errors.ErrUnsupported)

var errUnsupportedArch = errors.New("no seccomp filter for this architecture")

// confined remembers the bubblewrap executables whose confinement was
// verified in this process.
var confined sync.Map // bwrap path and uid → struct{}

// verify runs a probe with r's confinement once per bubblewrap executable
// and process, and returns ErrUnconfined unless the probe ran with no
// capability at all, no_new_privs, a seccomp filter and the sandbox's
// uid and gid.
func (r *run) verify(ctx context.Context) error {
	key := fmt.Sprint(r.bwrap, r.uid())
	if _, ok := confined.Load(key); ok {
		return nil
	}
	probe := *r
	probe.req = provider.ExecRequest{Command: "cat /proc/self/status"}
	out, err := probe.start(ctx)
	if err != nil {
		return fmt.Errorf("exec: %w: %w", ErrUnconfined, err)
	}
	if out.exitCode != 0 {
		return fmt.Errorf("exec: %w: bwrap: %s", ErrUnconfined, strings.TrimSpace(out.stderr))
	}
	if err := checkStatus(out.stdout, r.uid()); err != nil {
		return fmt.Errorf("exec: %w: %w", ErrUnconfined, err)
	}
	confined.Store(key, struct{}{})
	return nil
}

// checkStatus checks /proc/self/status as a process of the sandbox sees
// it.
func checkStatus(status string, uid int) error {
	id := fmt.Sprint(uid)
	want := map[string]string{
		"Uid": strings.Join([]string{id, id, id, id}, "\t"), "Gid": strings.Join([]string{id, id, id, id}, "\t"),
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
		"NoNewPrivs": "1", "Seccomp": "2",
	}
	for _, line := range strings.Split(status, "\n") {
		k, v, _ := strings.Cut(line, ":")
		if w, ok := want[k]; ok {
			if v = strings.TrimSpace(v); v != w {
				return fmt.Errorf("%s is %s, want %s", k, v, w)
			}
			delete(want, k)
		}
	}
	for k := range want {
		return fmt.Errorf("%s missing from /proc/self/status", k)
	}
	return nil
}
