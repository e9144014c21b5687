package storecopy

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/meta"
)

// catalog is a store's metadata apart from nodes and inline bodies: what
// the final transaction writes, and what verification compares.
type catalog struct {
	settings    map[string]string // without SettingSource and blob_store
	counters    map[string]int64
	tenants     []meta.Tenant
	workspaces  []meta.Workspace
	staging     map[string][]meta.Staged // by workspace ID
	checkpoints []meta.Checkpoint        // by workspace, oldest first
	cpStaging   map[string][]meta.Staged // by checkpoint ID
	states      []state                  // every workspace's, by Seq
	audit       []meta.AuditEntry        // by Seq
	conflicts   []meta.Conflict
	tokens      []meta.Token
	refs        []meta.SessionRef
}

// state is a recorded state with its staging rows.
type state struct {
	meta.State
	rows []meta.Staged
}

// auditPage is how many audit entries one read returns.
const auditPage = 10000

// readCatalog reads m's catalog in one snapshot. lose decides about a
// part that cannot be read: nil skips it, an error ends the read.
func readCatalog(ctx context.Context, m meta.Store, lose func(kind, name string, err error) error) (*catalog, error) {
	var cat *catalog
	err := m.View(ctx, func(tx meta.Tx) error {
		cat = &catalog{staging: map[string][]meta.Staged{}, cpStaging: map[string][]meta.Staged{}}
		return cat.read(tx, lose)
	})
	return cat, err
}

func (cat *catalog) read(tx meta.Tx, lose func(kind, name string, err error) error) error {
	ct, err := meta.CopyOf(tx)
	if err != nil {
		return err
	}
	if cat.settings, err = ct.Settings(); err != nil {
		return err
	}
	delete(cat.settings, SettingSource)
	delete(cat.settings, settingBlobStore)
	if cat.counters, err = ct.Counters(); err != nil {
		return err
	}
	if cat.tenants, err = tx.Tenants(); err != nil {
		if err := lose("table", "tenants", err); err != nil {
			return err
		}
	}
	all, err := tx.Workspaces()
	if err != nil {
		return err
	}
	for _, w := range all {
		// Head generations fence the processes sharing a store
		// (decision 023); the destination has none yet, so its
		// generations start afresh.
		w.HeadGen = 0
		name := w.Tenant + "/" + w.Name
		rows, err := tx.Staged(w.ID)
		if err != nil {
			if err := lose("workspace", name, err); err != nil {
				return err
			}
			continue
		}
		cat.workspaces = append(cat.workspaces, w)
		cat.staging[w.ID] = rows
		if err := cat.readCheckpoints(tx, w, name, lose); err != nil {
			return err
		}
		if err := cat.readStates(tx, ct, w, name, lose); err != nil {
			return err
		}
		cs, err := tx.Conflicts(w.ID)
		if err != nil {
			if err := lose("table", "merge conflicts of "+name, err); err != nil {
				return err
			}
		}
		cat.conflicts = append(cat.conflicts, cs...)
	}
	slices.SortFunc(cat.states, func(a, b state) int { return cmp.Compare(a.Seq, b.Seq) })
	for after := int64(0); ; {
		page, err := tx.Audit(meta.AuditFilter{After: after, Ascending: true, Limit: auditPage})
		if err != nil {
			if err := lose("table", fmt.Sprintf("audit log after entry %d", after), err); err != nil {
				return err
			}
			break
		}
		for _, e := range page {
			e.State = false // derived from the states, compared there
			if len(e.Changed) == 0 {
				e.Changed = nil
			}
			cat.audit = append(cat.audit, e)
		}
		if len(page) < auditPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	if cat.tokens, err = tx.Tokens(); err != nil {
		if err := lose("table", "tokens", err); err != nil {
			return err
		}
	}
	if cat.refs, err = ct.SessionRefsAll(); err != nil {
		if err := lose("table", "session refs", err); err != nil {
			return err
		}
	}
	return nil
}

func (cat *catalog) readCheckpoints(tx meta.Tx, w meta.Workspace, name string, lose func(kind, name string, err error) error) error {
	cps, err := tx.Checkpoints(w.ID)
	if err != nil {
		return lose("checkpoint", name+"@*", err)
	}
	for _, c := range cps {
		rows, err := tx.CheckpointStaged(c.ID)
		if err != nil {
			if err := lose("checkpoint", checkpointName(name, c), err); err != nil {
				return err
			}
			continue
		}
		cat.checkpoints = append(cat.checkpoints, c)
		if len(rows) > 0 {
			cat.cpStaging[c.ID] = rows
		}
	}
	return nil
}

func checkpointName(ws string, c meta.Checkpoint) string {
	if c.Kind != meta.CheckpointUser {
		return fmt.Sprintf("%s@%s (%s checkpoint %s)", ws, c.Label, c.Kind, c.ID)
	}
	return ws + "@" + c.Label
}

func (cat *catalog) readStates(tx meta.Tx, ct meta.CopyTx, w meta.Workspace, name string, lose func(kind, name string, err error) error) error {
	sts, err := ct.States(w.ID)
	if err != nil {
		return lose("history", name, err)
	}
	for _, s := range sts {
		rows, err := tx.StateStaged(s.Seq)
		if err != nil {
			if err := lose("history", fmt.Sprintf("%s@audit:%d", name, s.Seq), err); err != nil {
				return err
			}
			continue
		}
		for i := range rows {
			rows[i].Seq = 0 // the drivers number a state's rows their own way
		}
		cat.states = append(cat.states, state{State: s, rows: rows})
	}
	return nil
}

// drop removes what a salvage found unreadable after the catalog was
// read: workspaces (with their checkpoints, states and conflicts),
// checkpoints and states, by ID and Seq.
func (cat *catalog) drop(workspaces, checkpoints map[string]bool, states map[int64]bool) {
	cat.workspaces = slices.DeleteFunc(cat.workspaces, func(w meta.Workspace) bool { return workspaces[w.ID] })
	cat.checkpoints = slices.DeleteFunc(cat.checkpoints, func(c meta.Checkpoint) bool {
		return workspaces[c.WorkspaceID] || checkpoints[c.ID]
	})
	cat.states = slices.DeleteFunc(cat.states, func(s state) bool { return workspaces[s.WorkspaceID] || states[s.Seq] })
	cat.conflicts = slices.DeleteFunc(cat.conflicts, func(c meta.Conflict) bool { return workspaces[c.WorkspaceID] })
	for id := range workspaces {
		delete(cat.staging, id)
	}
	for id := range checkpoints {
		delete(cat.cpStaging, id)
	}
}

// writeCatalog writes cat into an empty destination in the order the
// CopyTx contract asks: states before their workspace's staging rows.
func writeCatalog(tx meta.Tx, cat *catalog, dst Side) error {
	ct, err := meta.CopyOf(tx)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(cat.settings) {
		if err := tx.SetSetting(k, cat.settings[k]); err != nil {
			return err
		}
	}
	if dst.BlobLocation != "" {
		if err := tx.SetSetting(settingBlobStore, dst.BlobLocation); err != nil {
			return err
		}
	}
	for _, t := range cat.tenants {
		if err := ct.ImportTenant(t); err != nil {
			return err
		}
	}
	for _, w := range cat.workspaces {
		if err := tx.CreateWorkspace(&w); err != nil {
			return err
		}
	}
	for _, c := range cat.checkpoints {
		if err := tx.CreateCheckpoint(&c); err != nil {
			return err
		}
		if rows := cat.cpStaging[c.ID]; len(rows) > 0 {
			if err := ct.ImportCheckpointStaged(c.ID, rows); err != nil {
				return err
			}
		}
	}
	for _, s := range cat.states {
		if err := ct.ImportState(s.State, s.rows); err != nil {
			return err
		}
	}
	for _, w := range cat.workspaces {
		if rows := cat.staging[w.ID]; len(rows) > 0 {
			if err := tx.PutStaged(w.ID, rows); err != nil {
				return err
			}
		}
	}
	if err := ct.ImportAudit(cat.audit); err != nil {
		return err
	}
	if len(cat.conflicts) > 0 {
		if err := ct.ImportConflicts(cat.conflicts); err != nil {
			return err
		}
	}
	for _, k := range cat.tokens {
		if err := ct.ImportToken(k); err != nil {
			return err
		}
	}
	for _, r := range cat.refs {
		if err := ct.ImportSessionRef(r); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(cat.counters) {
		if err := ct.RaiseCounter(name, cat.counters[name]); err != nil {
			return err
		}
	}
	return nil
}
