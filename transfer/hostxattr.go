package transfer

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// hostXattrPrefix limits the extended attributes exchanged with the host
// to the user namespace: others are either not readable without privilege
// or, like security.capability, grant privileges when written as root.
const hostXattrPrefix = "user."

// hostXattrs reads the user extended attributes of host path p (not
// following a link). A filesystem without xattr support has none.
func hostXattrs(p string) (map[string][]byte, error) {
	size, err := unix.Llistxattr(p, nil)
	if errors.Is(err, unix.ENOTSUP) || size == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if size, err = unix.Llistxattr(p, buf); err != nil {
		return nil, err
	}
	var out map[string][]byte
	for name := range strings.SplitSeq(strings.TrimRight(string(buf[:size]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, hostXattrPrefix) {
			continue
		}
		v, err := hostXattr(p, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make(map[string][]byte)
		}
		out[name] = v
	}
	return out, nil
}

func hostXattr(p, name string) ([]byte, error) {
	size, err := unix.Lgetxattr(p, name, nil)
	if err != nil {
		return nil, err
	}
	v := make([]byte, size)
	size, err = unix.Lgetxattr(p, name, v)
	return v[:size], err
}

// setHostXattrs sets the user extended attributes of e on open descriptor
// fd. A filesystem without support for them is not an error.
func setHostXattrs(fd int, e *entry) error {
	for name, v := range e.xattrs {
		if !strings.HasPrefix(name, hostXattrPrefix) {
			continue
		}
		err := unix.Fsetxattr(fd, name, v, 0)
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("set xattr %s: %w", name, err)
		}
	}
	return nil
}
