package devmount_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/devmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

func TestConformance(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
		return devmount.New(), mounttest.Fixture{
			Files:     map[string][]byte{"null": {}, "zero": make([]byte, devmount.ReadSize), "random": nil, "urandom": nil},
			Unchecked: []string{"random", "urandom"},
		}
	})
}

func TestDevices(t *testing.T) {
	ctx := context.Background()
	d := devmount.New()
	a, _ := d.ReadFile(ctx, "urandom")
	b, _ := d.ReadFile(ctx, "urandom")
	if len(a) != devmount.ReadSize || bytes.Equal(a, b) {
		t.Errorf("urandom reads %d bytes, equal twice: %v", len(a), bytes.Equal(a, b))
	}
	if err := d.WriteFile(ctx, "null", []byte("gone"), 0); err != nil {
		t.Errorf("write to null: %v", err)
	}
	if err := d.WriteFile(ctx, "tty", nil, 0); err == nil {
		t.Error("write to an unknown device succeeded")
	}
}
