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
// their bytes, at most readAheadFiles files ahead of the walk, while the
// sink writes the ones before (their attributes and extended attributes
// come with the listing). Consecutive files that may be inline (at most
// content.MaxInlineMax bytes) are read up to readAheadBatch in one
// vfs.FS.ReadFilesIn (names resolved from their directory, one metadata
// request for their bodies); a larger one is read on its own, so chunked
// files are read in parallel. Reads of a live workspace see its state
// when they run, as an export's reads always did.
type readAhead struct {
	files  []aheadFile   // by index in the listing
	slots  chan struct{} // one per file read but not yet taken
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

// aheadFile is one file of a listing: read ahead when done is not nil,
// and read once done is closed.
type aheadFile struct {
	done chan struct{}
	data []byte
	err  error
}

// newReadAhead starts reading the files of f in directory dir listed as
// dis whose entry in files has a done channel (dis and files are indexed
// alike).
func newReadAhead(ctx context.Context, f *vfs.FS, dir string, dis []vfs.DirInfo, files []aheadFile) *readAhead {
	ra := &readAhead{files: files, slots: make(chan struct{}, readAheadFiles)}
	jobs := aheadJobs(dis, files)
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
				ra.read(ctx, f, dir, dis, job)
			}
		})
	}
	return ra
}

// aheadJobs groups the files to read ahead (indexes into dis) into the
// reads that fetch them: consecutive files that may be inline together,
// up to readAheadBatch, any other file alone.
func aheadJobs(dis []vfs.DirInfo, files []aheadFile) [][]int {
	var jobs [][]int
	inline := func(i int) bool { return dis[i].Info.Size() <= content.MaxInlineMax }
	for i := range files {
		if files[i].done == nil {
			continue
		}
		if n := len(jobs); n > 0 && inline(i) && inline(jobs[n-1][0]) && len(jobs[n-1]) < readAheadBatch {
			jobs[n-1] = append(jobs[n-1], i)
		} else {
			jobs = append(jobs, []int{i})
		}
	}
	return jobs
}

// read reads the files of batch (indexes into dis) and marks each done.
func (ra *readAhead) read(ctx context.Context, f *vfs.FS, dir string, dis []vfs.DirInfo, batch []int) {
	names := make([]string, len(batch))
	for j, i := range batch {
		names[j] = dis[i].Name
	}
	done := 0
	err := f.ReadFilesIn(ctx, dir, names, func(j int, data []byte, err error) error {
		af := &ra.files[batch[j]]
		af.data, af.err = data, err
		close(af.done)
		done++
		return nil
	})
	for _, i := range batch[done:] { // ReadFilesIn failed as a whole
		af := &ra.files[i]
		af.err = err
		close(af.done)
	}
}

// take returns file i of the listing once it is read, or nil if it is not
// read ahead.
func (ra *readAhead) take(i int) *aheadFile {
	af := &ra.files[i]
	if af.done == nil {
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
