package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
)

func main() {
	// Interrupts cancel the command's context, so a long import or export
	// stops between writes and the store is closed cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && !a.ran {
		err = usageError{err}
	}
	return a.report(errors.Join(err, a.close()))
}

// newRoot wires the global flags and every subcommand.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "forkspace",
		Short: "Durable, forkable workspaces for AI agents",
		Long: "forkspace keeps POSIX-like file trees (workspaces) in a store of SQL metadata and\n" +
			"content-addressed blobs; fork, checkpoint, restore and diff cost the same at any size.",
		Example: "  forkspace init\n" +
			"  forkspace workspace create agent-1\n" +
			"  forkspace -w agent-1 import ./project --to /src\n" +
			"  forkspace -w agent-1 checkpoint before-refactor\n" +
			"  forkspace workspace fork agent-1 agent-1-try\n" +
			"  forkspace diff agent-1-try --unified",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(*cobra.Command, []string) error { a.ran = true; return nil },
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f := root.PersistentFlags()
	f.StringVar(&a.storeDir, "store", forkspace.DefaultDir(), "store directory ($FORKSPACE_HOME, else ./.forkspace)")
	f.StringVarP(&a.state, "workspace", "w", os.Getenv("FORKSPACE_WORKSPACE"), "workspace to act in, NAME or NAME@CHECKPOINT ($FORKSPACE_WORKSPACE)")
	f.StringVar(&a.blobURL, "blob", os.Getenv("FORKSPACE_BLOB"), "blob store URL, s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=true or file:///DIR ($FORKSPACE_BLOB; default: blobs/ in the store directory; S3 credentials from the environment)")
	f.StringVar(&a.metaURL, "meta", os.Getenv("FORKSPACE_META"), "metadata database URL, postgres://[USER@]HOST[:PORT]/DB or postgres:///DB?host=/SOCKET/DIR ($FORKSPACE_META; default: meta.db in the store directory; the password from PGPASSWORD or ~/.pgpass)")
	f.BoolVar(&a.json, "json", false, "print listings and info as JSON")
	f.StringVar(&a.token, "token", os.Getenv("FORKSPACE_TOKEN"), "the token sent to a server ($FORKSPACE_TOKEN; see 'forkspace token')")
	f.StringVar(&a.server, "server", os.Getenv("FORKSPACE_SERVER"), "act through the forkspace server at this URL ($FORKSPACE_SERVER; by default the store's own server when it is busy)")
	root.AddCommand(
		initCmd(a), workspaceCmd(a),
		lsCmd(a), statCmd(a), catCmd(a), putCmd(a), getCmd(a), rmCmd(a), mvCmd(a), mkdirCmd(a),
		checkpointCmd(a), checkpointsCmd(a), restoreCmd(a), diffCmd(a),
		gcCmd(a), fsckCmd(a), dfCmd(a),
		importCmd(a), exportCmd(a), demoCmd(a), logCmd(a), historyCmd(a), watchCmd(a),
		mcpCmd(a), serveCmd(a), mountCmd(a), doctorCmd(a), execCmd(a), fuseCmd(a),
		mergeCmd(a), conflictsCmd(a), resolveCmd(a), cherryPickCmd(a), tokenCmd(a), forkCmd(a), compareCmd(a), promoteCmd(a),
		storeCmd(a),
	)
	return root
}
