package storecopy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// owner is one state a salvage walks: a workspace head, a checkpoint or a
// recorded state, with its tree root and staging rows.
type owner struct {
	kind, name string
	root       cas.Hash
	rows       []meta.Staged
	ws         string // workspace ID, for naming files
	drop       func()
}

// fileRef is a file whose content references an object.
type fileRef struct {
	ws  string
	ino uint64
}

// salvager is a salvage's walk over every state's tree.
type salvager struct {
	c     *copier
	kv    *kv.Store
	clean map[cas.Hash]int64 // nodes whose subtrees read whole
	// refs maps each body and blob a readable state references to the
	// files that reference it; bodies says which are inline bodies.
	refs   map[cas.Hash][]fileRef
	bodies map[cas.Hash]int64
	blobs  map[cas.Hash]int64
	// names maps an inode to its parent and name, as some state has it.
	names   map[uint64]dirName
	wsNames map[string]string
}

type dirName struct {
	parent uint64
	name   string
}

// errUnreadable ends the walk of a state that reaches an unreadable node.
var errUnreadable = errors.New("unreadable node")

// salvageObjects walks every state of the catalog, drops (and reports)
// those that reach an unreadable node, and lists the nodes, bodies and
// blobs the rest reference. Bodies and blobs that turn out unreadable
// when copied are reported as lost files and skipped.
func (c *copier) salvageObjects(ctx context.Context, cat *catalog) (*objects, error) {
	s := &salvager{c: c, kv: kv.New(c.src.Meta, kv.Options{}), clean: map[cas.Hash]int64{},
		refs: map[cas.Hash][]fileRef{}, bodies: map[cas.Hash]int64{}, blobs: map[cas.Hash]int64{},
		names: map[uint64]dirName{}, wsNames: map[string]string{}}
	c.lostBlob = s.lostObject
	lostWS, lostCP, lostStates := map[string]bool{}, map[string]bool{}, map[int64]bool{}
	var owners []owner
	for _, w := range cat.workspaces {
		name := w.Tenant + "/" + w.Name
		s.wsNames[w.ID] = name
		owners = append(owners, owner{"workspace", name, w.Root, cat.staging[w.ID], w.ID, func() { lostWS[w.ID] = true }})
	}
	for _, cp := range cat.checkpoints {
		name := checkpointName(s.wsNames[cp.WorkspaceID], cp)
		owners = append(owners, owner{"checkpoint", name, cp.Root, cat.cpStaging[cp.ID], cp.WorkspaceID, func() { lostCP[cp.ID] = true }})
	}
	for _, st := range cat.states {
		name := fmt.Sprintf("%s@audit:%d", s.wsNames[st.WorkspaceID], st.Seq)
		owners = append(owners, owner{"history", name, st.Root, st.rows, st.WorkspaceID, func() { lostStates[st.Seq] = true }})
	}
	for i, o := range owners {
		if err := s.walk(ctx, o); err != nil {
			var bad badNode
			if !errors.As(err, &bad) {
				return nil, err
			}
			o.drop()
			if err := c.lose(o.kind, o.name, err); err != nil {
				return nil, err
			}
		}
		c.progress("salvage", int64(i+1), int64(len(owners)), 0)
	}
	cat.drop(lostWS, lostCP, lostStates)
	o := &objects{}
	for h, size := range s.clean {
		o.nodes = append(o.nodes, object{h, size})
	}
	if err := s.readable(ctx, bodyKind, &o.bodies); err != nil {
		return nil, err
	}
	if err := s.readableBlobs(ctx, &o.blobs); err != nil {
		return nil, err
	}
	sortObjects(o.nodes)
	return o, nil
}

// badNode is the failure of a walk at an unreadable node.
type badNode struct {
	h   cas.Hash
	err error
}

func (b badNode) Error() string { return fmt.Sprintf("tree node %s: %v", b.h.Short(), b.err) }
func (b badNode) Unwrap() error { return b.err }

// walk reads o's tree, skipping subtrees an earlier walk read whole, and
// records what its entries and staging rows reference. The nodes it read
// count as clean only if all of it could be read.
func (s *salvager) walk(ctx context.Context, o owner) error {
	seen := map[cas.Hash]int64{}
	var bad error
	err := s.kv.Walk(ctx, o.root, kv.WalkFuncs{
		Enter: func(h cas.Hash) bool {
			_, ok := s.clean[h]
			return !ok
		},
		Node: func(h cas.Hash, size int) error { seen[h] = int64(size); return nil },
		Leaf: func(key, value []byte) error { return s.entry(o.ws, key, value) },
		Failed: func(h cas.Hash, err error) error {
			bad = badNode{h, err}
			return bad
		},
	})
	if bad != nil {
		return bad
	}
	if err != nil {
		return err
	}
	for _, r := range o.rows {
		if !r.Deleted {
			if err := s.entry(o.ws, r.Key, r.Value); err != nil {
				return err
			}
		}
	}
	for h, size := range seen {
		s.clean[h] = size
	}
	return nil
}

// entry records a directory entry's name, or the objects a content
// manifest references. A manifest that does not decode is a lost file.
func (s *salvager) entry(ws string, key, value []byte) error {
	if len(key) > 10 && key[0] == 'i' && key[9] == 'd' && len(value) == 9 {
		// 'i' parent(8) 'd' name → child(8) type: the vfs key layout.
		s.names[binary.BigEndian.Uint64(value)] = dirName{binary.BigEndian.Uint64(key[1:9]), string(key[10:])}
		return nil
	}
	man, ok, err := vfs.ContentRefs(key, value)
	if err != nil {
		return s.c.lose("file", s.fileName(fileRef{ws, binary.BigEndian.Uint64(key[1:9])}), err)
	}
	if !ok {
		return nil
	}
	ref := fileRef{ws, binary.BigEndian.Uint64(key[1:9])}
	for _, e := range man.Extents {
		if e.Hash.IsZero() {
			continue
		}
		if man.Inline {
			s.bodies[e.Hash] = e.Size
		} else {
			s.blobs[e.Hash] = e.Size
		}
		if refs := s.refs[e.Hash]; !slices.Contains(refs, ref) {
			s.refs[e.Hash] = append(refs, ref)
		}
	}
	return nil
}

// fileName names a file: its workspace and its path as some state has
// it, or its inode number.
func (s *salvager) fileName(f fileRef) string {
	var parts []string
	for ino := f.ino; ino != 1; {
		n, ok := s.names[ino]
		if !ok || len(parts) > 4096 {
			return fmt.Sprintf("%s:inode %d", s.wsNames[f.ws], f.ino)
		}
		parts = append(parts, n.name)
		ino = n.parent
	}
	slices.Reverse(parts)
	return s.wsNames[f.ws] + ":/" + path.Join(parts...)
}

// lostObject reports the files referencing an unreadable body or blob.
func (s *salvager) lostObject(h cas.Hash, err error) error {
	for _, f := range s.refs[h] {
		if err := s.c.lose("file", s.fileName(f), fmt.Errorf("%s %s: %w", "content", h.Short(), err)); err != nil {
			return err
		}
	}
	return nil
}

// readable keeps the referenced bodies that read and match their hash.
func (s *salvager) readable(ctx context.Context, k objectKind, out *[]object) error {
	get := k.get(s.c.src.Meta)
	for h, size := range s.bodies {
		if _, err := readVerified(ctx, get, h); err != nil {
			if err := s.lostObject(h, err); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, object{h, size})
	}
	sortObjects(*out)
	return nil
}

// readableBlobs keeps the referenced blobs the source holds; a blob that
// turns out damaged when copied is reported then.
func (s *salvager) readableBlobs(ctx context.Context, out *[]object) error {
	for h := range s.blobs {
		info, err := s.c.src.Blobs.Stat(ctx, h)
		if err != nil {
			if err := s.lostObject(h, err); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, object{h, info.Size})
	}
	sortObjects(*out)
	return nil
}
