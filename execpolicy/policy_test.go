package execpolicy

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/provider"
)

func TestParseNetwork(t *testing.T) {
	for in, want := range map[string]string{"": "off", "off": "off", "full": "full",
		"example.org:443": "example.org:443", " a:1, 10.0.0.1:22 ": "a:1,10.0.0.1:22", "[::1]:80": "[::1]:80",
		"Registry.NPMJS.org:443": "registry.npmjs.org:443"} {
		p, err := ParseNetwork(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseNetwork(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"on", "host", "host:0", "host:65536", ":80", "a:1,,b:2", "a b:80", "FULL x"} {
		if _, err := ParseNetwork(in); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("ParseNetwork(%q) = %v, want fs.ErrInvalid", in, err)
		}
	}
}

// TestPolicyJSON: a policy survives JSON, and a bad network in JSON is
// fs.ErrInvalid (settings and token rows are read back this way).
func TestPolicyJSON(t *testing.T) {
	n := Network{Mode: Allow, Allow: []string{"a:1", "b:2"}}
	p := Policy{Network: &n, Limits: provider.Limits{Memory: 1 << 20, Processes: 5}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"network":"a:1,b:2","limits":{"memory":1048576,"processes":5}}` {
		t.Errorf("JSON %s", b)
	}
	var q Policy
	if err := json.Unmarshal(b, &q); err != nil || q.String() != p.String() {
		t.Errorf("round trip: %v, %v", q, err)
	}
	if err := json.Unmarshal([]byte(`{"network":"everything"}`), &q); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("bad network in JSON: %v, want fs.ErrInvalid", err)
	}
	if b, _ := json.Marshal(Policy{}); string(b) != "{}" {
		t.Errorf("zero policy JSON %s", b)
	}
}

// allows is the model: whether network n lets a run reach dest (a
// host:port).
func allows(n Network, dest string) bool {
	switch n.Mode {
	case Full:
		return true
	case Allow:
		return slices.Contains(n.Allow, dest)
	}
	return false
}

// dests are the destinations allowlists are drawn from; beyond is one no
// allowlist names, which only a full network reaches.
var (
	dests  = []string{"a:1", "a:2", "b:1", "c:3"}
	beyond = "d:4"
)

func genNetwork() *rapid.Generator[Network] {
	return rapid.Custom(func(t *rapid.T) Network {
		switch rapid.IntRange(0, 2).Draw(t, "mode") {
		case 1:
			return Network{Mode: Full}
		case 2:
			return Network{Mode: Allow, Allow: rapid.SliceOfNDistinct(rapid.SampledFrom(dests), 1, 4, rapid.ID).Draw(t, "allow")}
		}
		return Network{}
	})
}

func genPolicy() *rapid.Generator[Policy] {
	return rapid.Custom(func(t *rapid.T) Policy {
		var p Policy
		if rapid.Bool().Draw(t, "hasNet") {
			n := genNetwork().Draw(t, "net")
			p.Network = &n
		}
		p.Limits.Memory = rapid.Int64Range(0, 4).Draw(t, "mem")
		p.Limits.Processes = rapid.IntRange(0, 4).Draw(t, "procs")
		return p
	})
}

// netOf is what a level's policy allows on its own (unset: everything).
func netOf(p Policy) Network {
	if p.Network == nil {
		return Network{Mode: Full}
	}
	return *p.Network
}

// TestNarrowMatchesModel: the narrowest of two policies reaches exactly
// the destinations both reach, caps each limit at the smaller cap, and is
// Within both; a policy is Within another exactly when its set parts
// reach no destination and allow no limit the other does not.
func TestNarrowMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, q := genPolicy().Draw(t, "p"), genPolicy().Draw(t, "q")
		r := p.Narrow(q)
		for _, d := range append(slices.Clip(dests), beyond) {
			if got, want := allows(netOf(r), d), allows(netOf(p), d) && allows(netOf(q), d); got != want {
				t.Fatalf("%v ∩ %v = %v: reaches %s %v, want %v", p, q, r, d, got, want)
			}
		}
		if (r.Network == nil) != (p.Network == nil && q.Network == nil) {
			t.Fatalf("%v ∩ %v = %v: network set %v", p, q, r, r.Network != nil)
		}
		for _, c := range [][3]int64{{p.Limits.Memory, q.Limits.Memory, r.Limits.Memory}, {int64(p.Limits.Processes), int64(q.Limits.Processes), int64(r.Limits.Processes)}} {
			want := min(c[0], c[1])
			if c[0] == 0 || c[1] == 0 {
				want = max(c[0], c[1])
			}
			if c[2] != want {
				t.Fatalf("%v ∩ %v = %v: cap %d, want %d", p, q, r, c[2], want)
			}
		}
		if err := r.Within(p); err != nil {
			t.Fatalf("%v ∩ %v = %v not within %v: %v", p, q, r, p, err)
		}
		if err := r.Within(q); err != nil {
			t.Fatalf("%v ∩ %v = %v not within %v: %v", p, q, r, q, err)
		}
		wider := false
		if p.Network != nil && q.Network != nil {
			for _, d := range append(slices.Clip(dests), beyond) {
				wider = wider || allows(*p.Network, d) && !allows(*q.Network, d)
			}
		}
		wider = wider || q.Limits.Memory != 0 && p.Limits.Memory > q.Limits.Memory ||
			q.Limits.Processes != 0 && p.Limits.Processes > q.Limits.Processes
		if err := p.Within(q); (err != nil) != wider || err != nil && !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("%v within %v = %v, want wider %v", p, q, err, wider)
		}
	})
}

func TestCheckNegative(t *testing.T) {
	if err := (Policy{Limits: provider.Limits{Disk: -1}}).Check(); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("negative disk cap: %v", err)
	}
}
