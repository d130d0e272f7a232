package markdown_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/markdown"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review/reviewtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestGolden(t *testing.T) {
	reviewtest.Golden(t, "md", *update, func(w io.Writer, d *review.Document) error { return markdown.Write(w, d, markdown.Options{}) })
}

// TestHostile: names, managers and values from the cluster are text: no
// tag, link or table cell of theirs survives (the e2e test renders the
// comment with a CommonMark renderer).
func TestHostile(t *testing.T) {
	for _, name := range []string{"hostile", "audit"} {
		var buf bytes.Buffer
		if err := markdown.Write(&buf, reviewtest.Documents(t)[name], markdown.Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, bad := range []string{"<img", "<script", "</summary></details><", "<b>evil", "](javascript", "\x1b", "\r", "\a", "**not bold**"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the comment holds %q", name, bad)
			}
		}
	}
}

// TestCut: a render too big for one comment is cut under GitHub's
// limit, says so, and counts what it left out; the counts at the top
// stay whole.
func TestCut(t *testing.T) {
	d := bigDocument(2000)
	var buf bytes.Buffer
	if err := markdown.Write(&buf, d, markdown.Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if len(out) > markdown.MaxComment {
		t.Errorf("comment of %d bytes, over %d", len(out), markdown.MaxComment)
	}
	for _, want := range []string{"### kubectl ssa diff: 1000 errors in 1000 of 2000 objects", "| conflict (error) | 1000 |", "| changes | 2000 |", "**Cut to fit GitHub's 65536-character comment limit.**", "Without their section: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the cut comment lacks %q", want)
		}
	}
	// What is shown and what the note counts add up.
	listed := strings.Count(out, "- ❌ **conflict**")
	var notListed, rest int
	_, note, ok := strings.Cut(out, "**Cut to fit")
	_, notShown, ok2 := strings.Cut(note, "Not listed above: ")
	_, noSection, ok3 := strings.Cut(note, "Without their section: ")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("the note does not count what it cut: %q", note)
	}
	if _, err := fmt.Sscanf(notShown, "%d problems", &notListed); err != nil {
		t.Fatalf("%v in %q", err, note)
	}
	if _, err := fmt.Sscanf(noSection, "%d objects", &rest); err != nil {
		t.Fatalf("%v in %q", err, note)
	}
	sections := strings.Count(out, "<details>")
	if listed == 0 || sections == 0 {
		t.Errorf("a cut comment lists %d problems and %d sections: both should show the worst", listed, sections)
	}
	if listed+notListed != 1000 || sections+rest != 2000 {
		t.Errorf("listed %d + not listed %d problems , %d sections + %d without = 2000?", listed, notListed, sections, rest)
	}
	small := &bytes.Buffer{}
	if err := markdown.Write(small, d, markdown.Options{Limit: 10000}); err != nil {
		t.Fatal(err)
	}
	if small.Len() > 10000 {
		t.Errorf("comment of %d bytes over the limit of 10000", small.Len())
	}
}

// bigDocument is a diff of n ConfigMaps, every other one conflicting.
func bigDocument(n int) *review.Document {
	d := &review.Document{Command: "diff", Rules: review.ApplyRules}
	for i := range n {
		o := review.Object{Ref: v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: fmt.Sprintf("cm-%04d", i)}}
		if i%2 == 0 {
			o.Problems = []review.Problem{{Rule: "conflict", Level: review.LevelError, Path: pathlang.ParseServerPath(".data.k"), Message: ".data.k: owned by \"other\" with \"a\"; the manifest sets \"b\"", Owners: []string{"other"}}}
		}
		o.Changes = []v1alpha1.DiffChange{{Path: pathlang.ParseServerPath(".data.k"), Change: v1alpha1.ChangeModified, Before: "a", After: "b"}}
		d.Objects = append(d.Objects, o)
	}
	return d
}

// BenchmarkWrite: the comment of a 2,000-object diff (cut to fit).
func BenchmarkWrite(b *testing.B) {
	d := bigDocument(2000)
	for b.Loop() {
		if err := markdown.Write(io.Discard, d, markdown.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A prediction from a snapshot says so under the title, with when it was
// taken (escaped, as everything that comes from outside).
func TestWriteSnapshotLine(t *testing.T) {
	d := bigDocument(1)
	d.Snapshot = "Predicted from snapshot shop_*x*.snapshot, taken 2026-11-27T16:00:00Z from v1.37.1: the cluster may have changed since"
	var b bytes.Buffer
	if err := markdown.Write(&b, d, markdown.Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[1], "### kubectl ssa diff:") || !strings.Contains(b.String(), "\nPredicted from snapshot shop\\_\\*x\\*.snapshot, taken 2026-11-27T16:00:00Z from v1.37.1: the cluster may have changed since\n") {
		t.Errorf("no snapshot line under the title:\n%s", b.String())
	}
}

// A bidi override or a zero-width character from the cluster (a name, a
// manager, a value) is shown escaped, as the terminal views show it: raw,
// it would reorder the comment's line ("Trojan Source").
func TestInvisibleEscaped(t *testing.T) {
	d := bigDocument(1)
	d.Objects[0].Ref.Name = "cm\u202egnp.exe"
	d.Objects[0].Problems[0].Owners = []string{"zero\u200bwidth"}
	d.Objects[0].Changes[0].After = "abc\u202edef"
	var b bytes.Buffer
	if err := markdown.Write(&b, d, markdown.Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range []string{"\u202e", "\u200b"} {
		if strings.Contains(out, r) {
			t.Errorf("the comment holds %U raw", []rune(r)[0])
		}
	}
	for _, want := range []string{`cm\u202egnp.exe`, `zero\u200bwidth`, `abc\u202edef`} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %s, escaped", want)
		}
	}
}
