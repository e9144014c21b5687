package merge

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"pgregory.net/rapid"
)

var update = flag.Bool("update", false, "rewrite the golden files' want sections")

// TestTextGolden runs the diff3 cases of testdata/diff3: each txtar file
// holds base, ours and theirs, and the merged text wanted (want), with the
// number of conflicts in its comment.
func TestTextGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/diff3/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, f := range a.Files {
				parts[f.Name] = f.Data
			}
			got := Text(parts["base"], parts["ours"], parts["theirs"], Labels{Ours: "ours", Base: "base", Theirs: "theirs"})
			comment := strings.TrimSpace(string(a.Comment))
			wantConflicts := strings.TrimPrefix(comment, "conflicts: ")
			if *update {
				for i := range a.Files {
					if a.Files[i].Name == "want" {
						a.Files[i].Data = got.Data
					}
				}
				a.Comment = []byte("conflicts: " + strconv.Itoa(got.Conflicts) + "\n")
				if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got.Data, parts["want"]) {
				t.Errorf("merged:\n%s\nwant:\n%s", got.Data, parts["want"])
			}
			if strconv.Itoa(got.Conflicts) != wantConflicts {
				t.Errorf("conflicts = %d, want %s", got.Conflicts, wantConflicts)
			}
		})
	}
}

// TestTextWithoutFinalNewline keeps a last line without a newline as it
// is, and ends marker lines with one (txtar cannot hold such files).
func TestTextWithoutFinalNewline(t *testing.T) {
	l := Labels{Ours: "ours", Base: "base", Theirs: "theirs"}
	if got := Text([]byte("a\nb\nc"), []byte("A\nb\nc"), []byte("a\nb\nC"), l); string(got.Data) != "A\nb\nC" || got.Conflicts != 0 {
		t.Errorf("clean merge = %q, %d conflicts", got.Data, got.Conflicts)
	}
	// Dropping the final newline is a change of the last line, merged as
	// any other; the same drop on both sides is one change.
	for _, c := range [][4]string{
		{"a\nb\nc\n", "a\nb\nc", "A\nb\nc\n", "A\nb\nc"},
		{"a\nb\nc\n", "A\nb\nc", "a\nb\nc", "A\nb\nc"},
		{"a\nb\nc", "A\nb\nc", "a\nb\nc\n", "A\nb\nc\n"},
	} {
		if got := Text([]byte(c[0]), []byte(c[1]), []byte(c[2]), l); string(got.Data) != c[3] || got.Conflicts != 0 {
			t.Errorf("Text(%q, %q, %q) = %q, %d conflicts; want %q", c[0], c[1], c[2], got.Data, got.Conflicts, c[3])
		}
	}
	got := Text([]byte("a\nb"), []byte("a\nx"), []byte("a\ny"), l)
	want := "a\n<<<<<<< ours\nx\n||||||| base\nb\n=======\ny\n>>>>>>> theirs\n"
	if string(got.Data) != want || got.Conflicts != 1 {
		t.Errorf("clash = %q, %d conflicts; want %q", got.Data, got.Conflicts, want)
	}
}

// TestTextProperties checks Text on random edits of distinct lines: a side equal to
// base yields the other side, equal sides yield that side, and edits of
// disjoint, non-adjacent lines merge cleanly into both edits.
func TestTextProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "n")
		base := make([]string, n)
		for i := range base { // distinct lines: one alignment is right
			base[i] = "line " + strconv.Itoa(i) + "\n"
		}
		edit := func(label string, keep func(int) bool) []string {
			out := slices.Clone(base)
			for i := range out {
				if !keep(i) && rapid.Bool().Draw(t, label) {
					out[i] = label + " " + strconv.Itoa(i) + "\n"
				}
			}
			return out
		}
		// ours edits lines ≡ 0 (mod 4), theirs lines ≡ 2: never adjacent.
		ours := edit("ours", func(i int) bool { return i%4 != 0 })
		theirs := edit("theirs", func(i int) bool { return i%4 != 2 })
		join := func(ls []string) []byte { return []byte(strings.Join(ls, "")) }
		l := Labels{}
		if got := Text(join(base), join(base), join(theirs), l); !bytes.Equal(got.Data, join(theirs)) {
			t.Fatalf("ours = base: got %q", got.Data)
		}
		if got := Text(join(base), join(ours), join(ours), l); !bytes.Equal(got.Data, join(ours)) {
			t.Fatalf("same sides: got %q", got.Data)
		}
		want := slices.Clone(base)
		for i := range want {
			if ours[i] != base[i] {
				want[i] = ours[i]
			}
			if theirs[i] != base[i] {
				want[i] = theirs[i]
			}
		}
		if got := Text(join(base), join(ours), join(theirs), l); got.Conflicts != 0 || !bytes.Equal(got.Data, join(want)) {
			t.Fatalf("disjoint edits: got %q (%d conflicts), want %q", got.Data, got.Conflicts, join(want))
		}
	})
}
