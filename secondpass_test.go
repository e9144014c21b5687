package forkspace_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

// The store suite's second pass: the tests in secondPassSuite run once
// more, in a child process of this test binary, with every store they
// open on PostgreSQL (a database of the child's own server, pgtest) and
// S3 (a prefix of one bucket on versitygw, a real S3 server on loopback)
// instead of SQLite and a blob directory. A store opened through
// openPass records its database and prefix in its directory, so a
// reopen, in the test or in a crash writer it kills, finds them again.

// secondPassEnv carries the S3 endpoint to the child; set, it selects the
// second pass.
const secondPassEnv = "FORKSPACE_TEST_SECOND_PASS"

// secondPassBucket is the versitygw bucket the second pass's stores share
// under prefixes of their own.
const secondPassBucket = "suite"

// secondPassSuite names the store-level tests run on PostgreSQL + S3:
// fork, checkpoint, diff, merge, restore, time travel, GC and the kill -9
// crash tests. Left out are the tests that reach into SQLite or a blob
// directory on purpose (a damaged meta.db, the process lock of the
// embedded store, a power loss simulated on the blob directory) and
// those that count SQLite's own work.
var secondPassSuite = []string{
	"TestWorkspaceLifecycle",
	"TestBadInputChangesNothing",
	"TestReusedLabelNamesNewest",
	"TestReopenKeepsEverything",
	"TestCheckpointStateBeforeFold",
	"TestDiffOfViewsWithDeltas",
	"TestGCKeepsTimeTravelStates",
	"TestGCInterleavedWithTimeTravel",
	"TestGCKeepsMergeBasesAndConflictVersions",
	"TestGCInterleavedWithMerges",
	"TestMergeBaseOfOldFork",
	"TestRestoreMakesOpenHandlesStale",
	"TestScratchFork",
	"TestListMatchesUsage",
	"TestTenants",
	"TestAuditedLibraryHandle",
	"TestMergeForkIntoParent",
	"TestMergeSiblingsAndGrandchildren",
	"TestMergeConflicts",
	"TestMergePolicies",
	"TestCherryPick",
	"TestRestorePaths",
	"TestMergeSpecialFiles",
	"TestCrashSafety",
	"TestCrashAfterClose",
	"TestCrashDuringImport",
}

// TestSecondPassOnPostgresAndS3 runs secondPassSuite on PostgreSQL + S3
// and fails unless every one of them ran and passed there.
func TestSecondPassOnPostgresAndS3(t *testing.T) {
	if os.Getenv(secondPassEnv) != "" {
		t.Fatal("the second pass does not run itself")
	}
	v := s3test.StartVersity(t, secondPassBucket)
	cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(secondPassSuite, "|")+")$", "-test.count=1", "-test.v", "-test.timeout=15m")
	cmd.Env = append(os.Environ(), secondPassEnv+"="+v.Direct)
	out, err := cmd.CombinedOutput()
	passed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	result := regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (\w+) `)
	for sc.Scan() {
		if m := result.FindStringSubmatch(sc.Text()); m != nil && m[1] == "PASS" {
			passed[m[2]] = true
		}
	}
	var missing []string
	for _, name := range secondPassSuite {
		if !passed[name] {
			missing = append(missing, name)
		}
	}
	if err != nil || len(missing) > 0 {
		t.Fatalf("second pass on PostgreSQL + S3: %v; not passed: %s\n%s", err, strings.Join(missing, ", "), out)
	}
	t.Logf("%d store tests passed on PostgreSQL + S3", len(passed))
}

// prefixes numbers the S3 prefixes of this process's stores.
var prefixes atomic.Int64

// passOptions returns o for this pass: unchanged in the first; in the
// second with Meta and Blobs on the database and S3 prefix recorded in
// o.Dir, recorded there first (a new database of tb's) when missing. A
// crash writer passes a nil tb: its parent recorded them.
func passOptions(tb testing.TB, o forkspace.Options) (forkspace.Options, error) {
	endpoint := os.Getenv(secondPassEnv)
	if endpoint == "" {
		return o, nil
	}
	record := filepath.Join(o.Dir, "second-pass")
	b, err := os.ReadFile(record)
	if errors.Is(err, fs.ErrNotExist) && tb != nil {
		if err = os.MkdirAll(o.Dir, 0o755); err == nil {
			b = fmt.Appendf(nil, "%s\np%d-%d", pgtest.DB(tb), os.Getpid(), prefixes.Add(1))
			err = os.WriteFile(record, b, 0o644)
		}
	}
	if err != nil {
		return o, fmt.Errorf("second pass: %w", err)
	}
	db, prefix, _ := strings.Cut(string(b), "\n")
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	m, err := pgmeta.Open(ctx, db, pgmeta.Options{Exclusive: true, Logger: quiet})
	if err != nil {
		return o, fmt.Errorf("second pass: %w", err)
	}
	bs, err := versityBlobs(endpoint, secondPassBucket, prefix)
	if err != nil {
		m.Close()
		return o, fmt.Errorf("second pass: %w", err)
	}
	o.Meta, o.Blobs = m, bs
	return o, nil
}

// openPass opens the store of o on this pass's drivers (passOptions).
func openPass(tb testing.TB, o forkspace.Options) (*forkspace.Store, error) {
	o, err := passOptions(tb, o)
	if err != nil {
		return nil, err
	}
	return forkspace.Open(context.Background(), o)
}
