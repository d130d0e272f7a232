// Package reviewtest holds the documents the review formats' golden
// tests render (sarif, markdown, junit): reports captured from
// kubectl-ssa's own runs (../testdata, see its README), with lines set as
// the caller sets them from the manifest.
package reviewtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

// Version stands for kubectl-ssa's version in the golden files.
const Version = "v0.0.0-test"

// manifestLines are the lines of testdata/apply.yaml's fields.
var manifestLines = map[string]int{
	".spec.replicas": 7,
	`.spec.template.spec.containers[name="web"].image`: 18,
}

// Documents are the documents to render, by name: a conflict, a diff, a
// conflict with hostile names and values (not from a file), an audit.
func Documents(t testing.TB) map[string]*review.Document {
	var c, hostile v1alpha1.ConflictReport
	var d v1alpha1.DiffReport
	var a v1alpha1.AuditReport
	load(t, "conflict.json", &c)
	load(t, "conflict-hostile.json", &hostile)
	load(t, "diff.json", &d)
	load(t, "audit.json", &a)
	// A path's JSON form is the apiserver's, which reads back exactly
	// only with the object it is in (a dotted label's key).
	for i := range d.Changes {
		d.Changes[i].Path = pathlang.ParseServerPath(d.Changes[i].Path.APIServerString(), d.Result, d.Live)
	}
	fromFile := func(o review.Object) review.Object {
		o.Source, o.URI, o.Line = "deploy/web.yaml", "deploy/web.yaml", 1
		for i := range o.Problems {
			p := &o.Problems[i]
			p.Line, p.Exact = manifestLines[p.Path.String()]
		}
		return o
	}
	hostileObject := review.FromConflict(&hostile)
	hostileObject.Source = "STDIN"
	return map[string]*review.Document{
		"conflict": {Command: "explain-conflict", Version: Version, Rules: review.ApplyRules, Objects: []review.Object{fromFile(review.FromConflict(&c))}},
		"diff":     {Command: "diff", Version: Version, Rules: review.ApplyRules, Objects: []review.Object{fromFile(review.FromDiff(&d))}},
		"hostile":  {Command: "explain-conflict", Version: Version, Rules: review.ApplyRules, Objects: []review.Object{hostileObject}},
		"audit":    {Command: "audit", Version: Version, Rules: AuditRules(), Objects: review.FromAudit(&a), Scanned: a.Scanned},
		"empty":    {Command: "diff", Version: Version, Rules: review.ApplyRules},
	}
}

// AuditRules are rules for the audit fixture's codes (the command takes
// them from pkg/audit's table, which render does not import).
func AuditRules() []review.Rule {
	return []review.Rule{
		{ID: "manual-edit", Level: review.LevelWarning, Short: "fields owned by kubectl's imperative commands", Help: "without `--expect-manager`: fields owned by kubectl's imperative commands", Fix: "as `drift`"},
		{ID: "csa-leftover", Level: review.LevelWarning, Short: "an entry of client-side kubectl apply", Help: "an entry of client-side `kubectl apply`", Fix: "`migrate ...`"},
		{ID: "before-first-apply", Level: review.LevelNote, Short: "fields owned by before-first-apply", Help: "fields owned by `before-first-apply`", Fix: "`migrate fold ... --field-manager A`"},
	}
}

// load reads a report captured as JSON: commands, which reports write
// as one line, are read back as words.
func load(t testing.TB, name string, into any) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	b, err = json.Marshal(words(raw, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func words(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = words(e, k)
		}
	case []any:
		for i, e := range v {
			v[i] = words(e, key)
		}
	case string:
		if key == "command" || key == "fix" {
			return strings.Fields(v)
		}
	}
	return v
}

// Golden renders every document with render and compares it with its
// golden file, testdata/NAME.ext (rewritten when update).
func Golden(t *testing.T, ext string, update bool, render func(io.Writer, *review.Document) error) {
	for name, doc := range Documents(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := render(&buf, doc); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+"."+ext)
			if update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}
