package transfer

import (
	"context"
	"runtime"
	"sync"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/vfs"
)

// readAhead reads the small regular files of one directory listing ahead
// of an export's walk: runtime.GOMAXPROCS workers read (and so verify)
// their bytes and extended attributes, at most readAheadFiles files ahead
// of the walk, while the sink writes the ones before. Consecutive files
// that may be inline (at most content.MaxInlineMax bytes) are read up to
// readAheadBatch in one vfs.FS.ReadFiles (one metadata request for their
// bodies); a larger one is read on its own, so chunked files are read in
// parallel. Reads of a live workspace see its state when they run, as
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

// aheadPath is an entry of a directory listing to read ahead: its path
// ("" for an entry not to read ahead) and size.
type aheadPath struct {
	path string
	size int64
}

// newReadAhead starts reading the files of f at paths (a directory
// listing's).
func newReadAhead(ctx context.Context, f *vfs.FS, paths []aheadPath) *readAhead {
	ra := &readAhead{files: map[int]*aheadFile{}, slots: make(chan struct{}, readAheadFiles)}
	var jobs [][]int // indexes into paths, read together
	inline := func(i int) bool { return paths[i].size <= content.MaxInlineMax }
	for i, p := range paths {
		if p.path == "" {
			continue
		}
		ra.files[i] = &aheadFile{done: make(chan struct{})}
		if n := len(jobs); n > 0 && inline(i) && inline(jobs[n-1][0]) && len(jobs[n-1]) < readAheadBatch {
			jobs[n-1] = append(jobs[n-1], i)
		} else {
			jobs = append(jobs, []int{i})
		}
	}
	if len(jobs) == 0 {
		return ra
	}
	ctx, ra.cancel = context.WithCancel(ctx)
	next := make(chan []int)
	ra.wg.Go(func() {
		defer close(next)
		for _, job := range jobs {
			for range job {
				select {
				case ra.slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case next <- job:
			case <-ctx.Done():
				return
			}
		}
	})
	for range runtime.GOMAXPROCS(0) {
		ra.wg.Go(func() {
			for job := range next {
				ra.read(ctx, f, paths, job)
			}
		})
	}
	return ra
}

// read reads the files of batch (indexes into paths) and marks each done.
func (ra *readAhead) read(ctx context.Context, f *vfs.FS, paths []aheadPath, batch []int) {
	names := make([]string, len(batch))
	for j, i := range batch {
		names[j] = paths[i].path
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
