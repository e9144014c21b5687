package forkspace_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "forkspace-example")
	defer os.RemoveAll(dir)

	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	ws, err := st.Create(ctx, "agent", forkspace.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "plan.md", []byte("1. read the code\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	if _, err := ws.Checkpoint(ctx, "plan written"); err != nil {
		log.Fatal(err)
	}

	try, err := ws.Fork(ctx, "agent-try", forkspace.ForkOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := try.WriteFile(ctx, "plan.md", []byte("1. rewrite everything\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	changes, err := st.Diff(ctx, "agent", "agent-try", vfs.DiffOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range changes {
		fmt.Println(c.Op, c.Path)
	}
	// Output: modified plan.md
}

func ExampleWorkspace_Restore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "forkspace-example")
	defer os.RemoveAll(dir)
	st, _ := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	defer st.Close()
	ws, _ := st.Create(ctx, "agent", forkspace.CreateOptions{})

	_ = ws.WriteFile(ctx, "main.go", []byte("package main // works\n"), 0o644)
	cp, _ := ws.Checkpoint(ctx, "green")
	_ = ws.WriteFile(ctx, "main.go", []byte("package main // broken\n"), 0o644)

	if err := ws.Restore(ctx, cp.ID); err != nil {
		log.Fatal(err)
	}
	b, _ := ws.ReadFile(ctx, "main.go")
	fmt.Print(string(b))
	// Output: package main // works
}
