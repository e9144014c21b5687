package gitmount

import (
	"net/url"
	"os"
	"strings"
)

// DefaultUsername is the basic-auth user sent with a token (GitHub, GitLab
// and Gitea accept any name; this is GitHub's documented one).
const DefaultUsername = "x-access-token"

// Options configure a Mount. The zero value of each field means the default.
type Options struct {
	// URL is an http(s) URL, a file:// URL or a local path of a
	// repository (bare or not). Required.
	URL string
	// Ref is a branch, a tag, a full ref name or a commit hash (full or
	// abbreviated; a remote one costs a full fetch); default: HEAD. A
	// local repository also takes any revision go-git resolves ("main~1").
	Ref string
	// Subdir, when set, is the only directory materialized; its contents
	// land at the mount root.
	Subdir string
	// Full fetches the whole history instead of depth 1.
	Full bool
	// Token authenticates HTTP requests; see the package doc for the
	// environment fallback. Username defaults to DefaultUsername.
	Token    string
	Username string
}

// token is o.Token, else GIT_TOKEN, else GITHUB_TOKEN when host is
// github.com.
func (o Options) token(host string) string {
	if o.Token != "" {
		return o.Token
	}
	if t := os.Getenv("GIT_TOKEN"); t != "" {
		return t
	}
	if strings.EqualFold(host, "github.com") {
		return os.Getenv("GITHUB_TOKEN")
	}
	return ""
}

// localPath is the repository directory of a local URL ("" for a remote
// one).
func localPath(u *url.URL) string {
	switch u.Scheme {
	case "":
		return u.Path
	case "file":
		return u.Path
	}
	return ""
}
