// Package urlcreds finds credentials embedded in URLs: user information
// ("scheme://user:secret@host") in the URL itself or in a URL given as one
// of its query parameters or as its fragment (an S3 endpoint
// "?endpoint=http://AKID:SECRET@host"), at any depth, and query parameters
// whose names look like secrets (token, secret, password, key, signature,
// credential).
//
// Check refuses such a URL, naming where the credentials are and never
// what they are; store and mount URLs go through it, so nothing that
// persists a URL can persist a secret. Redact removes them, for error
// messages and for scrubbing URLs persisted before Check existed.
package urlcreds
