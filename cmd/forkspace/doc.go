// Command forkspace manages forkspace stores from the shell: workspaces,
// their files, checkpoints, forks, diffs, and tree import/export. See
// docs/cli.md for every command, its JSON output and the exit codes.
package main
