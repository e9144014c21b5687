package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gentree DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "gentree: N must be a non-negative integer")
		os.Exit(2)
	}
	if err := generate(os.Args[1], n); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
}

func generate(root string, n int) error {
	block := make([]byte, 12<<10)
	if _, err := rand.Read(block); err != nil {
		return err
	}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		binary.LittleEndian.PutUint32(block, uint32(i))
		size := 8<<10 + i%(4<<10)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d", i)), block[:size], 0o644); err != nil {
			return err
		}
	}
	return nil
}
