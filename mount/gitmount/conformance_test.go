package gitmount_test

import (
	"testing"

	"github.com/forkspace/forkspace/internal/gittest"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/gitmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

func TestConformance(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
		fx := gittest.NewFixture(t)
		srv := gittest.Serve(t, fx.Root, "")
		m, err := gitmount.Open(gitmount.Options{URL: srv.URL + "/" + fx.Name, Ref: "main"})
		if err != nil {
			t.Fatal(err)
		}
		return m, mounttest.Fixture{Files: map[string][]byte{
			"README.md":         []byte("v2\n"),
			"bin/run.sh":        []byte("#!/bin/sh\necho run\n"),
			"docs/guide.md":     []byte("# Guide\n"),
			"docs/sub/deep.txt": []byte("deep\n"),
		}}
	})
}
