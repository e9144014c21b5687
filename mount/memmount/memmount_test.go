package memmount_test

import (
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/memmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

func TestConformance(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
		files := map[string][]byte{"hello.sh": []byte("echo hi\n"), "lib/__init__.py": {}, "lib/np/core.py": []byte("x = 1\n")}
		return memmount.New(files), mounttest.Fixture{Files: files, Writable: true}
	})
}
