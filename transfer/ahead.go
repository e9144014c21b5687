package transfer

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/forkspace/forkspace/vfs"
)

// readAhead reads the small regular files of one directory listing ahead
// of an export's walk: runtime.GOMAXPROCS workers read (and so verify)
// their bytes, readAheadBatch files in one vfs.FS.ReadFiles (one metadata
// request for their inline bodies), and their extended attributes, at
// most readAheadFiles files ahead of the walk, while the sink writes the
// ones before. Reads of a live workspace see its state when they run, as
// an export's reads always did.
type readAhead struct {
	files  map[int]*aheadFile // by index in the listing
	slots  chan struct{}      // one per file read but not yet taken
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// readAheadFiles bounds the files a directory's walk reads ahead (each at
// most smallFile bytes; a walk reads ahead in each directory it is in),
// readAheadBatch at a time.
const (
	readAheadFiles = 32
	readAheadBatch = 16
)

// aheadFile is one file read ahead; done is closed when it is.
type aheadFile struct {
	done   chan struct{}
	data   []byte
	xattrs map[string][]byte
	err    error
}

// newReadAhead starts reading the files of f at paths (a directory
// listing's; "" for an entry not to read ahead).
func newReadAhead(ctx context.Context, f *vfs.FS, paths []string) *readAhead {
	ra := &readAhead{files: map[int]*aheadFile{}, slots: make(chan struct{}, readAheadFiles)}
	var order []int
	for i, p := range paths {
		if p != "" {
			ra.files[i] = &aheadFile{done: make(chan struct{})}
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return ra
	}
	ctx, ra.cancel = context.WithCancel(ctx)
	jobs := make(chan []int)
	ra.wg.Go(func() {
		defer close(jobs)
		for batch := range slices.Chunk(order, readAheadBatch) {
			for range batch {
				select {
				case ra.slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case jobs <- batch:
			case <-ctx.Done():
				return
			}
		}
	})
	for range runtime.GOMAXPROCS(0) {
		ra.wg.Go(func() {
			for batch := range jobs {
				ra.read(ctx, f, paths, batch)
			}
		})
	}
	return ra
}

// read reads the files of batch (indexes into paths) and marks each done.
func (ra *readAhead) read(ctx context.Context, f *vfs.FS, paths []string, batch []int) {
	names := make([]string, len(batch))
	for j, i := range batch {
		names[j] = paths[i]
	}
	done := 0
	err := f.ReadFiles(ctx, names, func(j int, data []byte, err error) error {
		af := ra.files[batch[j]]
		if af.data, af.err = data, err; err == nil {
			af.xattrs, af.err = wsXattrs(ctx, f, names[j])
		}
		close(af.done)
		done++
		return nil
	})
	for _, i := range batch[done:] { // ReadFiles failed as a whole
		af := ra.files[i]
		af.err = err
		close(af.done)
	}
}

// take returns file i of the listing once it is read, or nil if it is not
// read ahead.
func (ra *readAhead) take(i int) *aheadFile {
	af := ra.files[i]
	if af == nil {
		return nil
	}
	<-af.done
	<-ra.slots
	return af
}

// stop ends the reading and waits for the readers.
func (ra *readAhead) stop() {
	if ra.cancel == nil {
		return
	}
	ra.cancel() // the feeder stops; the readers finish what they hold
	ra.wg.Wait()
}
