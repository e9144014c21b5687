package metatest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Opener returns a new, empty store for one test and arranges for it to be
// closed when the test ends (a cleanup that tolerates fs.ErrClosed, since
// some tests close the store themselves).
type Opener func(t *testing.T) meta.Store

// Run runs the conformance suite, each test on a store of its own.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s meta.Store)
	}{
		{"Settings", testSettings},
		{"Counters", testCounters},
		{"CountersConcurrent", testCountersConcurrent},
		{"Objects", testObjects},
		{"GetInlines", testGetInlines},
		{"WorkspaceCreate", testWorkspaceCreate},
		{"WorkspaceList", testWorkspaceList},
		{"WorkspaceUpdate", testWorkspaceUpdate},
		{"WorkspaceDelete", testWorkspaceDelete},
		{"HeadGen", testHeadGen},
		{"HeadGenConcurrent", testHeadGenConcurrent},
		{"Checkpoints", testCheckpoints},
		{"Staging", testStaging},
		{"SessionRefs", testSessionRefs},
		{"StagingModel", testStagingModel},
		{"StateCopies", testStateCopies},
		{"ForkCopies", testForkCopies},
		{"UpdateRollback", testUpdateRollback},
		{"UpdatePanic", testUpdatePanic},
		{"UpdateConcurrent", testUpdateConcurrent},
		{"ViewIsolation", testViewIsolation},
		{"TxAfterReturn", testTxAfterReturn},
		{"ViewReadOnly", testViewReadOnly},
		{"Canceled", testCanceled},
		{"Now", testNow},
		{"CollectionClock", testCollectionClock},
		{"Closed", testClosed},
		{"CloseDuringUpdates", testCloseDuringUpdates},
		{"Audit", testAudit},
		{"History", testHistory},
		{"PruneCounts", testPruneCounts},
		{"AuditFeed", testAuditFeed},
		{"Touch", testTouch},
		{"Intents", testIntents},
		{"Condemn", testCondemn},
		{"Tenants", testTenants},
		{"Tokens", testTokens},
		{"Packs", testPacks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// update runs fn in an Update and fails the test on error.
func update(t testing.TB, s meta.Store, fn func(meta.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// view runs fn in a View and fails the test on error.
func view(t testing.TB, s meta.Store, fn func(meta.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("view: %v", err)
	}
}

// wantErr fails the test unless errors.Is(err, target). A missing row
// must not bring the driver's words along ("sql: no rows in result set"
// reached users through every message built on it).
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
	if err != nil && strings.Contains(err.Error(), "no rows") {
		t.Errorf("%s: the error names the driver's internals: %v", what, err)
	}
}

// hashOf is the content address of s.
func hashOf(s string) cas.Hash { return cas.Sum([]byte(s)) }

// workspace returns a workspace description with ID "id-"+name.
func workspace(name string) meta.Workspace {
	return meta.Workspace{ID: "id-" + name, Name: name}
}

// createWorkspaces creates workspaces with the given names.
func createWorkspaces(t testing.TB, s meta.Store, names ...string) {
	t.Helper()
	update(t, s, func(tx meta.Tx) error {
		for _, n := range names {
			w := workspace(n)
			if err := tx.CreateWorkspace(&w); err != nil {
				return err
			}
		}
		return nil
	})
}

// sameWorkspace reports how got differs from want ("" if equal).
func sameWorkspace(got, want meta.Workspace) string {
	if got.ID != want.ID || got.Name != want.Name || got.Tenant != want.Tenant || got.Root != want.Root ||
		got.ParentID != want.ParentID || got.OriginCheckpoint != want.OriginCheckpoint ||
		got.Quota != want.Quota || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return ""
}

// closeTo reports whether a and b are within d of each other.
func closeTo(a, b time.Time, d time.Duration) bool {
	diff := a.Sub(b)
	return diff < d && diff > -d
}
