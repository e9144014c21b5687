package execpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Mode is how much network commands may have.
type Mode int

const (
	// Off: commands see only their own loopback (the default).
	Off Mode = iota
	// Full: commands reach any address but the host's own (loopback and
	// interface addresses).
	Full
	// Allow: commands reach the listed host:port pairs and nothing else.
	Allow
)

// Network is a network policy. The zero value is Off.
type Network struct {
	Mode Mode
	// Allow lists "host:port" pairs (Mode Allow); host names are lower
	// case.
	Allow []string
}

// ParseNetwork parses a policy: "off", "full", or a comma-separated list
// of host:port pairs. Anything else is fs.ErrInvalid.
func ParseNetwork(s string) (Network, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "off":
		return Network{}, nil
	case "full":
		return Network{Mode: Full}, nil
	}
	n := Network{Mode: Allow}
	for _, hp := range strings.Split(s, ",") {
		hp = strings.ToLower(strings.TrimSpace(hp))
		if err := checkHostPort(hp); err != nil {
			return Network{}, err
		}
		n.Allow = append(n.Allow, hp)
	}
	return n, nil
}

// String returns the policy in ParseNetwork's syntax.
func (n Network) String() string {
	switch n.Mode {
	case Full:
		return "full"
	case Allow:
		return strings.Join(n.Allow, ",")
	}
	return "off"
}

// MarshalText writes the policy in ParseNetwork's syntax.
func (n Network) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText parses the policy with ParseNetwork.
func (n *Network) UnmarshalText(b []byte) error {
	v, err := ParseNetwork(string(b))
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// Narrow returns what both n and m allow.
func (n Network) Narrow(m Network) Network {
	switch {
	case n.Mode == Off || m.Mode == Off:
		return Network{}
	case n.Mode == Full:
		return m
	case m.Mode == Full:
		return n
	}
	var both []string
	for _, hp := range n.Allow {
		if slices.Contains(m.Allow, hp) {
			both = append(both, hp)
		}
	}
	if len(both) == 0 {
		return Network{}
	}
	return Network{Mode: Allow, Allow: both}
}

// Within reports whether n allows nothing outer does not.
func (n Network) Within(outer Network) bool {
	switch {
	case n.Mode == Off || outer.Mode == Full:
		return true
	case outer.Mode == Off || n.Mode == Full:
		return false
	}
	for _, hp := range n.Allow {
		if !slices.Contains(outer.Allow, hp) {
			return false
		}
	}
	return true
}

// checkHostPort checks one allowlist entry.
func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, " \t\n#")) {
			err = errors.New("want host:port with a port in 1-65535")
		}
	}
	if err != nil {
		return fmt.Errorf("network policy %q: %w: %v (want off, full or host:port,...)", hp, fs.ErrInvalid, err)
	}
	return nil
}
