package mount_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/memmount"
)

// FuzzParseURL: parsing never panics, and a persisted source never keeps
// user information or a secret-looking query parameter.
func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"mem://bucket/prefix?mode=rw&token=abc",
		"mem://user:pass@host/p?X-Amz-Signature=1&region=eu#ref",
		"mem:opaque?maxbytes=10&ignore=.git,node_modules",
		"mem://h/%zz", "ftp://x", "", "::", "mem://h?mode=bogus",
	} {
		f.Add(seed)
	}
	drivers := mount.Drivers{"mem": func(*url.URL, mount.Options) (mount.Mount, error) { return memmount.New(nil), nil }}
	f.Fuzz(func(t *testing.T, raw string) {
		_, opts, source, err := mount.ParseURL(raw, drivers)
		if err != nil {
			return
		}
		if _, err := opts.WithDefaults(); err != nil {
			t.Fatalf("accepted invalid options %+v", opts)
		}
		u, err := url.Parse(source)
		if err != nil {
			t.Fatalf("source %q does not parse: %v", source, err)
		}
		if u.User != nil {
			t.Fatalf("source %q keeps user information", source)
		}
		for k := range u.Query() {
			lk := strings.ToLower(k)
			for _, w := range []string{"token", "secret", "password", "key", "signature", "credential"} {
				if strings.Contains(lk, w) {
					t.Fatalf("source %q keeps %q", source, k)
				}
			}
		}
	})
}
