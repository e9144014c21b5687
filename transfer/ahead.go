package transfer

import (
	"context"
	"runtime"
	"sync"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/vfs"
)

// walkAhead runs an export's walk of a workspace ahead of its sink: one
// goroutine lists the directories in walk order and hands each entry on
// (at most walkAheadEntries ahead of the sink), and runtime.GOMAXPROCS
// workers read the small regular files among them meanwhile (and so
// verify their bytes), across directories, so the readers never wait for
// the sink to reach the next directory. Consecutive files of one listing
// that may be inline (at most content.MaxInlineMax bytes) are read up to
// readAheadBatch in one vfs.FS.ReadFilesIn (names resolved from their
// directory, one metadata request for their bodies); a larger one is read
// on its own, so chunked files are read in parallel. Reads of a live
// workspace see its state when they run, as an export's reads always did.
type walkAhead struct {
	items  chan walked
	jobs   chan aheadJob
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// walkAheadEntries bounds the entries listed ahead of the sink (each a
// file of at most smallFile bytes read ahead, or none); readAheadBatch
// files of a directory are read together.
const (
	walkAheadEntries = 128
	readAheadBatch   = 16
)

// walked is one entry of the walk, in order: its name in the transfer,
// its workspace path and listing, and its bytes when read ahead; or the
// error that ended the walk.
type walked struct {
	name, p string
	di      vfs.DirInfo
	af      *aheadFile
	err     error
}

// aheadFile is a file read ahead, once done is closed.
type aheadFile struct {
	done chan struct{}
	data []byte
	err  error
}

// aheadJob is one read: files of directory dir.
type aheadJob struct {
	dir   string
	names []string
	files []*aheadFile
}

// startWalk starts walking directory p (named name in the transfer) of
// s: list yields its entries, read ahead when bodies is set.
func (s *wsSource) startWalk(ctx context.Context, p, name string, bodies bool) *walkAhead {
	ctx, cancel := context.WithCancel(ctx)
	wa := &walkAhead{items: make(chan walked, walkAheadEntries), jobs: make(chan aheadJob, walkAheadEntries/readAheadBatch), cancel: cancel}
	for range runtime.GOMAXPROCS(0) {
		wa.wg.Go(func() {
			for job := range wa.jobs {
				read(ctx, s.fs, job)
			}
		})
	}
	wa.wg.Go(func() {
		defer close(wa.items)
		defer close(wa.jobs)
		if err := s.list(ctx, wa, p, name, bodies); err != nil {
			select {
			case wa.items <- walked{err: err}:
			case <-ctx.Done():
			}
		}
	})
	return wa
}

// list hands on the entries of directory p and, after each
// subdirectory's own entry, the subdirectory's.
func (s *wsSource) list(ctx context.Context, wa *walkAhead, p, name string, bodies bool) error {
	dis, err := s.fs.ReadDirInfo(ctx, p, bodies)
	if err != nil {
		return err
	}
	files := make([]*aheadFile, len(dis))
	if bodies {
		for i, di := range dis {
			if s.readsAhead(di, s.join(p, di.Name)) {
				files[i] = &aheadFile{done: make(chan struct{})}
			}
		}
	}
	jobs := aheadJobs(p, dis, files)
	for i, di := range dis {
		cp := s.join(p, di.Name)
		if s.fs.IsVirtual(cp) {
			continue // a virtual mount: served live, never exported
		}
		if len(jobs) > 0 && jobs[0].files[0] == files[i] {
			select {
			case wa.jobs <- jobs[0]:
			case <-ctx.Done():
				return ctx.Err()
			}
			jobs = jobs[1:]
		}
		select {
		case wa.items <- walked{name: s.join(name, di.Name), p: cp, di: di, af: files[i]}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if di.Info.IsDir() {
			if err := s.list(ctx, wa, cp, s.join(name, di.Name), bodies); err != nil {
				return err
			}
		}
	}
	return nil
}

// aheadJobs groups the files of directory dir to read ahead (those of
// files not nil; dis and files are indexed alike) into the reads that
// fetch them: consecutive files that may be inline together, up to
// readAheadBatch, any other file alone.
func aheadJobs(dir string, dis []vfs.DirInfo, files []*aheadFile) []aheadJob {
	var jobs []aheadJob
	batching := false // the last job reads files that may be inline
	for i, af := range files {
		if af == nil {
			continue
		}
		inline := dis[i].Info.Size() <= content.MaxInlineMax
		if n := len(jobs); n > 0 && inline && batching && len(jobs[n-1].files) < readAheadBatch {
			jobs[n-1].names = append(jobs[n-1].names, dis[i].Name)
			jobs[n-1].files = append(jobs[n-1].files, af)
			continue
		}
		jobs = append(jobs, aheadJob{dir: dir, names: []string{dis[i].Name}, files: []*aheadFile{af}})
		batching = inline
	}
	return jobs
}

// read reads the files of job and marks each done.
func read(ctx context.Context, f *vfs.FS, job aheadJob) {
	done := 0
	err := f.ReadFilesIn(ctx, job.dir, job.names, func(j int, data []byte, err error) error {
		af := job.files[j]
		af.data, af.err = data, err
		close(af.done)
		done++
		return nil
	})
	for _, af := range job.files[done:] { // ReadFilesIn failed as a whole
		af.err = err
		close(af.done)
	}
}

// stop ends the walk and waits for its goroutines.
func (wa *walkAhead) stop() {
	wa.cancel()
	for range wa.items { // the lister may be blocked handing on one
	}
	wa.wg.Wait()
}
