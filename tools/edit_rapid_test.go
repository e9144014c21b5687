package tools

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestApplyEditsModel checks applyEdits against a model: edits apply in
// order when each old text occurs exactly once at its turn; otherwise the
// call fails naming the first bad edit, and nothing is applied.
func TestApplyEditsModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]string{"a", "b", "c", "\n", "ab", " "})
		word := rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(alphabet, 0, 4).Draw(t, "parts"), "")
		})
		text := strings.Join(rapid.SliceOfN(alphabet, 0, 20).Draw(t, "text"), "")
		edits := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) editSpec {
			return editSpec{OldText: word.Draw(t, "old"), NewText: word.Draw(t, "new")}
		}), 1, 4).Draw(t, "edits")

		want, bad := text, 0
		for i, e := range edits {
			if e.OldText == "" || strings.Count(want, e.OldText) != 1 {
				bad = i + 1
				break
			}
			want = strings.Replace(want, e.OldText, e.NewText, 1)
		}
		got, err := applyEdits("f", text, edits)
		switch {
		case bad == 0 && (err != nil || got != want):
			t.Fatalf("applyEdits = %q, %v; want %q", got, err, want)
		case bad != 0 && (err == nil || got != "" || !strings.Contains(err.Error(), "edit "+string(rune('0'+bad))+":")):
			t.Fatalf("applyEdits = %q, %v; want a failure of edit %d", got, err, bad)
		}
	})
}
