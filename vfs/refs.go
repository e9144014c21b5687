package vfs

import "github.com/forkspace/forkspace/content"

// ContentRefs reports what a key/value pair of a workspace's key space (a
// tree entry or a staging row) references outside the tree: for a content
// key ('i' ino 'c') it returns the decoded manifest, whose extents name an
// inline body (Manifest.Inline) or blob chunks (zero hashes are holes), and
// true; any other key references nothing and returns false. A content value
// that does not decode is errdefs.ErrCorrupt. Garbage collection uses it to
// find the bodies and chunks reachable from trees and staging.
func ContentRefs(key, value []byte) (content.Manifest, bool, error) {
	if len(key) != 10 || key[0] != 'i' || key[9] != kindContent || value == nil {
		return content.Manifest{}, false, nil
	}
	m, err := content.Decode(value)
	if err != nil {
		return content.Manifest{}, false, err
	}
	return m, true, nil
}
