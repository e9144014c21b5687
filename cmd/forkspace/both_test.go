package main

import "testing"

// throughServer makes newCLI start "forkspace serve" on each test's store,
// so every command the test runs finds the store busy and reaches it
// through the server (httpapi.Client) instead of opening it.
var throughServer bool

// TestCLIThroughServer runs the CLI's own test cases again, each command
// through a real serve process on 127.0.0.1: same output, JSON shapes and
// exit codes as when the command opens the store itself. (Tests that open
// the store in the test process, or import from and export to host
// directories, which a server cannot reach, run only the local way.)
func TestCLIThroughServer(t *testing.T) {
	throughServer = true
	defer func() { throughServer = false }()
	for name, test := range map[string]func(*testing.T){
		"ExitCodes":             TestExitCodes,
		"FileCommands":          TestFileCommands,
		"WorkspaceCommands":     TestWorkspaceCommands,
		"CheckpointRestoreDiff": TestCheckpointRestoreDiff,
		"PutRefusedKeepsOld":    TestPutRefusedKeepsOld,
		"GCFsckDf":              TestGCFsckDf,
		"MountCommands":         TestMountCommands,
		"MountConflictCommands": TestMountConflictCommands,
		"MountRootCommands":     TestMountRootCommands,
		"ExecPullRefused":       TestExecPullRefused,
		"DeleteRemovesWorkDir":  TestDeleteRemovesWorkDir,
		"MergeCommands":         TestMergeCommands,
		"BestOfNCommands":       TestBestOfNCommands,
	} {
		t.Run(name, test)
	}
}
