// Package textdiff renders unified diffs of text by whole lines.
//
// go-udiff's Unified diffs by characters and then widens the edits to
// lines, which can show an unchanged line as removed and re-added next to a
// real insertion. Here each distinct line becomes one symbol, the symbol
// sequences are diffed (go-udiff's lcs), and the result is rendered with
// go-udiff's unified format: hunks contain only lines that changed.
package textdiff
