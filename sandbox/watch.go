package sandbox

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is every directory-entry event a command can cause.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// watcher records which work-dir paths changed (inotify on every
// directory), so the scan after a command visits those instead of every
// path. It reports when it cannot tell (queue overflow, an unknown watch,
// a watch that could not be added): the scan then walks everything.
// Events are queued synchronously by the kernel, so draining after the
// sandbox exited sees every change the command made.
type watcher struct {
	fd  int
	dir string

	mu     sync.Mutex // guards the fields below (walkers add concurrently)
	paths  map[int32]string
	wds    map[string]int32
	broken bool
}

func newWatcher(dir string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &watcher{fd: fd, dir: dir, paths: map[int32]string{}, wds: map[string]int32{}}, nil
}

func (w *watcher) close() { unix.Close(w.fd) }

// add watches directory rel (re-adding a moved directory updates its
// path). A failure (such as the watch limit) marks the watcher broken.
func (w *watcher) add(rel string) {
	abs := w.dir
	if rel != "." {
		abs += "/" + rel
	}
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.broken = true
		return
	}
	if old, ok := w.paths[int32(wd)]; ok && w.wds[old] == int32(wd) {
		delete(w.wds, old)
	}
	w.paths[int32(wd)], w.wds[rel] = rel, int32(wd)
}

// events are the paths a drain found changed: each path whose entry
// changed, and the directories that appeared (created or moved in) whose
// whole subtree must be walked.
type events struct {
	paths    map[string]bool
	subtrees map[string]bool
}

// drain reads every queued event. ok is false when the events cannot be
// trusted to name every change.
func (w *watcher) drain() (ev events, ok bool) {
	ev = events{paths: map[string]bool{}, subtrees: map[string]bool{}}
	buf := make([]byte, 64<<10)
	ok = true
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil || n <= 0 {
			return ev, false
		}
		w.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			e := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(e.Len)]
			off += unix.SizeofInotifyEvent + int(e.Len)
			if e.Mask&unix.IN_Q_OVERFLOW != 0 {
				ok = false
				continue
			}
			dir, known := w.paths[e.Wd]
			if e.Mask&unix.IN_IGNORED != 0 {
				if known && w.wds[dir] == e.Wd {
					delete(w.wds, dir)
				}
				delete(w.paths, e.Wd)
				continue
			}
			if !known {
				ok = false
				continue
			}
			p := dir
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) > 0 {
				p = path.Join(dir, string(name))
			}
			ev.paths[p] = true
			if e.Mask&unix.IN_ISDIR != 0 && e.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
				ev.subtrees[p] = true
			}
		}
		ok = ok && !w.broken
		w.mu.Unlock()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return ev, ok && !w.broken
}

// maxWatchers bounds the inotify instances this process holds (the
// per-user default limit is 128, shared with every other program): past
// it, the work dir least recently run loses its watcher and rebuilds it on
// its next run.
var maxWatchers = 32

// watchers lists the dirStates holding a watcher, least recently used
// first.
var watchers struct {
	sync.Mutex
	list []*dirState
}

// watchAll gives st a new watcher on every directory of its manifest,
// evicting the watcher of another work dir when the process holds
// maxWatchers. The caller holds st.mu. Without inotify st keeps none and
// scans walk everything.
func (st *dirState) watchAll(dir string) {
	watchers.Lock()
	defer watchers.Unlock()
	for i := 0; len(watchers.list) >= maxWatchers && i < len(watchers.list); {
		other := watchers.list[i]
		if !other.mu.TryLock() { // running: try the next one
			i++
			continue
		}
		if other.watch != nil {
			other.watch.close()
			other.watch = nil
		}
		other.mu.Unlock()
		watchers.list = slices.Delete(watchers.list, i, i+1)
	}
	w, err := newWatcher(dir)
	if err != nil {
		return
	}
	for p, e := range st.man {
		if e.kind == kindDir {
			w.add(p)
		}
	}
	st.watch = w
	watchers.list = append(watchers.list, st)
}

// touchWatch marks st's watcher as just used.
func (st *dirState) touchWatch() {
	watchers.Lock()
	defer watchers.Unlock()
	if i := slices.Index(watchers.list, st); i >= 0 {
		watchers.list = append(slices.Delete(watchers.list, i, i+1), st)
	}
}

// dropWatch closes st's watcher. The caller holds st.mu.
func (st *dirState) dropWatch() {
	if st.watch == nil {
		return
	}
	st.watch.close()
	st.watch = nil
	watchers.Lock()
	defer watchers.Unlock()
	if i := slices.Index(watchers.list, st); i >= 0 {
		watchers.list = slices.Delete(watchers.list, i, i+1)
	}
}
