package mount_test

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/devmount"
	"github.com/forkspace/forkspace/mount/memmount"
)

func TestTable(t *testing.T) {
	mem := memmount.New(nil)
	cases := []struct {
		name  string
		specs []mount.Spec
		want  string // substring of the error; "" for success
	}{
		{"ok", []mount.Spec{{Root: "/a", Mount: mem}, {Root: "/ab", Mount: mem}, {Root: "/dev", Mount: devmount.New()}}, ""},
		{"nested", []mount.Spec{{Root: "/a/b", Mount: mem}, {Root: "/a", Mount: mem}}, "mount /a/b: invalid argument: nested in mount /a"},
		{"equal", []mount.Spec{{Root: "/a", Mount: mem}, {Root: "/a", Mount: mem}}, "nested in mount /a"},
		{"relative", []mount.Spec{{Root: "a", Mount: mem}}, "absolute clean path"},
		{"slash", []mount.Spec{{Root: "/", Mount: mem}}, "absolute clean path"},
		{"unclean", []mount.Spec{{Root: "/a/../b", Mount: mem}}, "absolute clean path"},
		{"none", []mount.Spec{{Root: "/a"}}, "exactly one of Mount and Factory"},
		{"mode", []mount.Spec{{Root: "/a", Mount: mem, Options: mount.Options{Mode: "rwx"}}}, "mode"},
		{"rw-readonly-source", []mount.Spec{{Root: "/a", Mount: bare{}, Options: mount.Options{Mode: mount.ReadWrite}}}, "exactly one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mount.NewTable(c.specs)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

type bare struct{}

func (bare) Kind() string { return "bare" }

func TestPolicy(t *testing.T) {
	tab, err := mount.NewTable([]mount.Spec{
		{Root: "/ro", Mount: memmount.New(nil), Options: mount.Options{Ignore: []string{".cache"}}},
		{Root: "/rw", Mount: memmount.New(nil), Options: mount.Options{Mode: mount.ReadWrite}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path            string
		ro, rw, ignored bool
		root, rel       string
	}{
		{"ro", true, false, false, "/ro", "."},
		{"/ro/a/b", true, false, false, "/ro", "a/b"},
		{"ro/x/.cache/y", true, false, true, "/ro", "x/.cache/y"},
		{"rw/f", false, true, false, "/rw", "f"},
		{"rox/f", false, false, false, "", ""},
		{".", false, false, false, "", ""},
	} {
		if tab.ReadOnly(c.path) != c.ro || tab.Writable(c.path) != c.rw || tab.Ignored(c.path) != c.ignored {
			t.Errorf("%s: ro %v rw %v ignored %v", c.path, tab.ReadOnly(c.path), tab.Writable(c.path), tab.Ignored(c.path))
		}
		s, rel, _ := tab.Match(c.path)
		if s.Root != c.root || rel != c.rel {
			t.Errorf("match %s: %q %q", c.path, s.Root, rel)
		}
	}
	if err := tab.CheckWrite("write", "ro/a"); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("CheckWrite: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	var gotURL *url.URL
	drivers := mount.Drivers{
		"mem": func(u *url.URL, _ mount.Options) (mount.Mount, error) { gotURL = u; return memmount.New(nil), nil },
		"s3":  func(*url.URL, mount.Options) (mount.Mount, error) { return memmount.New(nil), nil },
	}
	s, err := mount.ParseSpec("/data=mem://host/p?mode=rw&writebackms=50&maxentries=3&ignore=.git,node_modules&region=x#main", drivers)
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options
	if o.Mode != mount.ReadWrite || o.WriteBackMs != 50 || o.MaxEntries != 3 || len(o.Ignore) != 2 || o.WriteBack != mount.Debounce {
		t.Errorf("options %+v", o)
	}
	if !strings.Contains(s.Source, "region=x") || !strings.HasSuffix(s.Source, "#main") {
		t.Errorf("source %q loses a parameter", s.Source)
	}
	if gotURL.Query().Has("mode") || gotURL.Query().Get("region") != "x" {
		t.Errorf("driver saw %s", gotURL)
	}
	for raw, want := range map[string]string{
		"ftp://x":            "unknown scheme \"ftp\" (known: mem, s3)",
		"mem://x?mode=rwx":   "mode",
		"mem://x?maxbytes=z": "maxbytes",
		"/x=":                "unknown scheme",
		// Credentials anywhere are refused (an endpoint's user
		// information was persisted in clear).
		"mem://user:pw@host/p":                         "use the environment",
		"s3://b/p?endpoint=http://AKID:S3CR3T@h:9000":  "use the environment",
		"mem://host/p?mode=rw&secret_key=abc":          "use the environment",
		"s3://b?endpoint=http%3A%2F%2FAK%3AS3CR3T%40h": "use the environment",
	} {
		_, _, _, err := mount.ParseURL(raw, drivers)
		if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if _, err := mount.ParseSpec("nodelimiter", drivers); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("spec without =: %v", err)
	}
}
