// Package benchtree generates the file trees that benchmarks import: a
// tar stream of many small files, written as it is read so that a
// million files never sit in memory, with contents of their own.
package benchtree
