package transfer

import (
	"context"
	"runtime"
	"sync"

	"github.com/forkspace/forkspace/vfs"
)

// readAhead reads the small regular files of one directory listing ahead
// of an export's walk: runtime.GOMAXPROCS workers read (and so verify)
// their bytes and extended attributes, at most readAheadFiles files ahead of
// the walk, while the sink writes the ones before. Reads of a live
// workspace see its state when they run, as an export's reads always did.
type readAhead struct {
	files  map[int]*aheadFile // by index in the listing
	slots  chan struct{}      // one per file read but not yet taken
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// readAheadFiles bounds the files a directory's walk reads ahead (each at
// most smallFile bytes; a walk reads ahead in each directory it is in).
const readAheadFiles = 16

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
	jobs := make(chan int)
	ra.wg.Go(func() {
		defer close(jobs)
		for _, i := range order {
			if ctx.Err() != nil {
				return
			}
			select {
			case ra.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			jobs <- i
		}
	})
	for range runtime.GOMAXPROCS(0) {
		ra.wg.Go(func() {
			for i := range jobs {
				af := ra.files[i]
				if af.data, af.err = f.ReadFile(ctx, paths[i]); af.err == nil {
					af.xattrs, af.err = wsXattrs(ctx, f, paths[i])
				}
				close(af.done)
			}
		})
	}
	return ra
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
