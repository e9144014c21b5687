package s3gw

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4, as S3 uses it: the Authorization header, or a
// presigned URL's query.
const (
	sigAlgorithm   = "AWS4-HMAC-SHA256"
	unsignedBody   = "UNSIGNED-PAYLOAD"
	streamingBody  = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	maxSkew        = 15 * time.Minute
	maxPresignLife = 7 * 24 * time.Hour
	amzDateFormat  = "20060102T150405Z"
)

// authError is a refused signature: the S3 error code and why.
type authError struct {
	code string // AccessDenied, SignatureDoesNotMatch, RequestTimeTooSkewed, InvalidAccessKeyId…
	msg  string
}

func (e *authError) Error() string { return e.code + ": " + e.msg }

func denied(code, format string, args ...any) *authError {
	return &authError{code: code, msg: fmt.Sprintf(format, args...)}
}

// signed is what a request's signature says: who signed it, and how.
type signed struct {
	accessKey   string
	date        string // yyyymmdd of the scope
	region      string
	service     string
	amzDate     time.Time
	headers     []string // signed header names, lower case, sorted
	signature   string
	payloadHash string
	presigned   bool
	expires     time.Duration
}

// parseSignature reads the signature of r (header or query).
func parseSignature(r *http.Request) (*signed, error) {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != "" {
		return parsePresigned(q)
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return nil, denied("AccessDenied", "the request is not signed: sign it with AWS Signature Version 4")
	}
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return nil, denied("AccessDenied", "only %s signatures are accepted", sigAlgorithm)
	}
	s := &signed{payloadHash: r.Header.Get("X-Amz-Content-Sha256")}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			if err := s.credential(v); err != nil {
				return nil, err
			}
		case "SignedHeaders":
			s.headers = strings.Split(v, ";")
		case "Signature":
			s.signature = v
		}
	}
	if s.signature == "" || len(s.headers) == 0 || s.accessKey == "" {
		return nil, denied("AuthorizationHeaderMalformed", "the Authorization header lacks Credential, SignedHeaders or Signature")
	}
	if s.payloadHash == "" {
		return nil, denied("InvalidRequest", "missing X-Amz-Content-Sha256")
	}
	date := r.Header.Get("X-Amz-Date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	var err error
	if s.amzDate, err = time.Parse(amzDateFormat, date); err != nil {
		return nil, denied("AccessDenied", "missing or malformed X-Amz-Date")
	}
	return s, nil
}

func parsePresigned(q url.Values) (*signed, error) {
	if q.Get("X-Amz-Algorithm") != sigAlgorithm {
		return nil, denied("AccessDenied", "only %s signatures are accepted", sigAlgorithm)
	}
	s := &signed{presigned: true, payloadHash: unsignedBody, signature: q.Get("X-Amz-Signature"), headers: strings.Split(q.Get("X-Amz-SignedHeaders"), ";")}
	if err := s.credential(q.Get("X-Amz-Credential")); err != nil {
		return nil, err
	}
	var err error
	if s.amzDate, err = time.Parse(amzDateFormat, q.Get("X-Amz-Date")); err != nil {
		return nil, denied("AuthorizationQueryParametersError", "missing or malformed X-Amz-Date")
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || secs <= 0 || time.Duration(secs)*time.Second > maxPresignLife {
		return nil, denied("AuthorizationQueryParametersError", "X-Amz-Expires must be 1 to %d seconds", int(maxPresignLife.Seconds()))
	}
	s.expires = time.Duration(secs) * time.Second
	if s.signature == "" || q.Get("X-Amz-SignedHeaders") == "" {
		return nil, denied("AuthorizationQueryParametersError", "missing X-Amz-Signature or X-Amz-SignedHeaders")
	}
	return s, nil
}

// credential parses "AKID/20261124/us-east-1/s3/aws4_request".
func (s *signed) credential(v string) error {
	parts := strings.Split(v, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" || parts[0] == "" {
		return denied("AuthorizationHeaderMalformed", "malformed credential scope %q", v)
	}
	s.accessKey, s.date, s.region, s.service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

// verify checks the signature of r against secret at now: the time, then
// the signature over the canonical request.
func (s *signed) verify(r *http.Request, secret string, now time.Time) error {
	if s.date != s.amzDate.Format("20060102") {
		return denied("SignatureDoesNotMatch", "the credential scope's date is not the request's")
	}
	if s.presigned {
		if now.Before(s.amzDate.Add(-maxSkew)) {
			return denied("RequestTimeTooSkewed", "the presigned URL is dated in the future")
		}
		if now.After(s.amzDate.Add(s.expires)) {
			return denied("AccessDenied", "the presigned URL expired at %s", s.amzDate.Add(s.expires).Format(time.RFC3339))
		}
	} else if d := now.Sub(s.amzDate); d > maxSkew || d < -maxSkew {
		return denied("RequestTimeTooSkewed", "the request time %s is more than %v from the server's %s", s.amzDate.Format(time.RFC3339), maxSkew, now.UTC().Format(time.RFC3339))
	}
	if !slices.Contains(s.headers, "host") {
		return denied("AccessDenied", "the Host header must be signed")
	}
	want := s.sign(r, secret)
	if subtle.ConstantTimeCompare([]byte(want), []byte(s.signature)) != 1 {
		return denied("SignatureDoesNotMatch", "the signature does not match: check the secret key and the signing method")
	}
	return nil
}

// sign computes the signature r should carry.
func (s *signed) sign(r *http.Request, secret string) string {
	scope := strings.Join([]string{s.date, s.region, s.service, "aws4_request"}, "/")
	sum := sha256.Sum256([]byte(s.canonicalRequest(r)))
	toSign := strings.Join([]string{sigAlgorithm, s.amzDate.Format(amzDateFormat), scope, hex.EncodeToString(sum[:])}, "\n")
	key := []byte("AWS4" + secret)
	for _, part := range []string{s.date, s.region, s.service, "aws4_request"} {
		key = hmacSum(key, part)
	}
	return hex.EncodeToString(hmacSum(key, toSign))
}

func hmacSum(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func (s *signed) canonicalRequest(r *http.Request) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(uriEncode(r.URL.Path, false))
	b.WriteByte('\n')
	b.WriteString(s.canonicalQuery(r.URL.Query()))
	b.WriteByte('\n')
	for _, h := range s.headers {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(s.headers, ";"))
	b.WriteByte('\n')
	b.WriteString(s.payloadHash)
	return b.String()
}

func (s *signed) canonicalQuery(q url.Values) string {
	type kv struct{ k, v string }
	var pairs []kv
	for k, vs := range q {
		if s.presigned && k == "X-Amz-Signature" {
			continue
		}
		for _, v := range vs {
			pairs = append(pairs, kv{uriEncode(k, true), uriEncode(v, true)})
		}
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.k + "=" + p.v
	}
	return strings.Join(out, "&")
}

// headerValue is a signed header's canonical value: values trimmed, inner
// runs of spaces folded, several joined by commas; "host" is r.Host.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		if v := r.Header.Get("Content-Length"); v != "" {
			vals = []string{v}
		} else {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vals = r.Header.Values(name)
	}
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

// uriEncode is SigV4's URI encoding: every byte but A-Z a-z 0-9 - _ . ~
// as %XX, and "/" kept in paths.
func uriEncode(s string, encodeSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// checkedBody fails the read that reaches the end of a body whose SHA-256
// is not the one its signature covers, so a write of it never completes.
type checkedBody struct {
	io.ReadCloser
	h    hash.Hash
	want []byte
}

func newCheckedBody(body io.ReadCloser, payloadHash string) (io.ReadCloser, error) {
	want, err := hex.DecodeString(payloadHash)
	if err != nil || len(want) != sha256.Size {
		return nil, denied("InvalidRequest", "X-Amz-Content-Sha256 must be a SHA-256 in hex, %s or %s", unsignedBody, streamingBody)
	}
	return &checkedBody{ReadCloser: body, h: sha256.New(), want: want}, nil
}

var errBodyHash = errors.New("XAmzContentSHA256Mismatch: the body does not match X-Amz-Content-Sha256")

func (b *checkedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.Write(p[:n])
	if err == io.EOF && !bytes.Equal(b.h.Sum(nil), b.want) {
		return n, errBodyHash
	}
	return n, err
}
