package urlcreds_test

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/internal/urlcreds"
)

func TestCheck(t *testing.T) {
	for raw, where := range map[string]string{
		"s3://AKID:S3CR3T@bucket/p":                                         "user information",
		"s3://bucket/p?endpoint=http://AKID:S3CR3T@host:9000":               `user information of parameter "endpoint"`,
		"s3://bucket/p?endpoint=http%3A%2F%2FAKID%3AS3CR3T%40host%3A9000":   `user information of parameter "endpoint"`,
		"s3://bucket/p?region=x&endpoint=https://AKID@host":                 `user information of parameter "endpoint"`,
		"s3://bucket?endpoint=http://h/?x=https://a:S3CR3T@b":               `user information of parameter "x"`,
		"s3://bucket?secret_key=S3CR3T":                                     `parameter "secret_key"`,
		"s3://bucket?AWS_SECRET_ACCESS_KEY=S3CR3T":                          `parameter "AWS_SECRET_ACCESS_KEY"`,
		"bundle+https://h/x.tar?X-Amz-Signature=S3CR3T":                     `parameter "X-Amz-Signature"`,
		"git+https://user:S3CR3T@host/r.git":                                "user information",
		"git+https://host/r.git#https://u:S3CR3T@h":                         "user information of parameter fragment",
		"s3://bucket?endpoint=http://h&endpoint=http://AKID:S3CR3T@h":       `user information of parameter "endpoint"`,
		"s3://bucket/p?endpoint=http://h:9000?access_token=S3CR3T&region=x": `parameter "access_token"`,
	} {
		err := urlcreds.Check(raw)
		if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "environment") {
			t.Errorf("%s: %v, want fs.ErrInvalid naming %s", raw, err, where)
		}
		if err != nil && strings.Contains(err.Error(), "S3CR3T") {
			t.Errorf("%s: the error repeats the secret: %v", raw, err)
		}
		red := urlcreds.Redact(raw)
		if strings.Contains(red, "S3CR3T") || urlcreds.Check(red) != nil {
			t.Errorf("redact %s = %s, still with credentials", raw, red)
		}
	}
	for _, raw := range []string{
		"s3://bucket/p?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true",
		"s3://bucket", "git+https://host/r.git#main:docs", "file:///x", "mem://h/p?mode=rw&maxbytes=10",
	} {
		if err := urlcreds.Check(raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestRedactKeepsTheRest(t *testing.T) {
	got := urlcreds.Redact("s3://b/p?endpoint=http://AK:SK@h:9000/x&region=r&token=t#main")
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "b" || u.Path != "/p" || u.Query().Get("endpoint") != "http://h:9000/x" || u.Query().Get("region") != "r" || u.Fragment != "main" || u.Query().Has("token") {
		t.Fatalf("redact = %s", got)
	}
}

// FuzzRedact: whatever parses, Redact's result passes Check.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"s3://a:b@c/d?endpoint=http://e:f@g&k=v#h", "mem://h?x=y://z:w@v", "::", "a://b?c=d://e@f://g:h@i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		red := urlcreds.Redact(raw)
		if red == "(unparsable url)" {
			return
		}
		if err := urlcreds.Check(red); err != nil {
			t.Fatalf("redact %q = %q, which Check refuses: %v", raw, red, err)
		}
	})
}
