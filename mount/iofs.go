package mount

import (
	"context"
	"io/fs"

	"github.com/forkspace/forkspace/vfs"
)

// VirtualFS returns v as an fs.FS (plus ReadDirFS, ReadFileFS and StatFS)
// whose operations use ctx: the read-only io/fs view of a virtual mount.
func VirtualFS(ctx context.Context, v Virtual) fs.FS { return vfs.VirtualIOFS(ctx, v) }
