// Command gentree writes a tree of N files of 8–12 KiB (100 per directory)
// with distinct contents, for benchmarks that need a realistic host tree.
//
//	go run ./bench/gentree DIR N
package main
