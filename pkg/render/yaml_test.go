package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// oldYAML is what -o yaml wrote before it streamed: JSONToYAML of the JSON.
func oldYAML(t *testing.T, items []any, asList bool) string {
	t.Helper()
	var buf bytes.Buffer
	if err := render.Data(&buf, "json", items, asList); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.JSONToYAML(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tricky holds what YAML output can get wrong: key order (letters first,
// numbers by value), quoting, long strings folded by column, literal
// blocks, nested lists, empty containers, numbers.
var tricky = map[string]any{
	"key10": 1, "key2": 2, "key02": 3, "Key1": true, "_x": nil, "9": "nine", "é": "accent", "a b": "space", "a:b": "colon",
	"long":    strings.Repeat("words that go on and on ", 12),
	"block":   "line one\nline two\n",
	"nested":  []any{[]any{1, 2}, []any{}, map[string]any{}, map[string]any{"deep": []any{map[string]any{"x": strings.Repeat("y ", 60)}}}},
	"numbers": map[string]any{"int": 42, "float": 0.5, "big": 1e21, "neg": -3, "str": "042", "yes": "yes", "null": "null"},
	"objects": []any{map[string]any{"path": ".spec", "owners": []any{map[string]any{"manager": "a\x1bb", "time": "2026-01-01T00:00:00Z"}}}},
}

// -o yaml writes, byte for byte, what it wrote before it streamed, for
// every report shape and at every size threshold.
func TestYAMLStreamsTheSameBytes(t *testing.T) {
	var reports []any
	for _, fixture := range []string{"deployment.yaml", "configmap.yaml", "secret.yaml", "widget.yaml", "configmap-no-managed-fields.yaml"} {
		reports = append(reports, analyze(t, fixture, ownership.Filter{}, ownership.Options{}))
	}
	big, err := ownership.Analyze(benchdata.ConfigMap(300), ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, big, tricky, map[string]any{}, []any{tricky, "x"})
	defer func(v int) { *render.SmallJSON = v }(*render.SmallJSON)
	for _, small := range []int{0, 64, 4 << 10} {
		*render.SmallJSON = small
		for i, r := range reports {
			for _, asList := range []bool{false, true} {
				t.Run(fmt.Sprintf("small=%d/%d/list=%v", small, i, asList), func(t *testing.T) {
					var buf bytes.Buffer
					if err := render.Data(&buf, "yaml", []any{r}, asList); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(oldYAML(t, []any{r}, asList), buf.String()); diff != "" {
						t.Errorf("(-JSONToYAML +streamed):\n%s", diff)
					}
				})
			}
		}
		t.Run(fmt.Sprintf("small=%d/all as a list", small), func(t *testing.T) {
			var buf bytes.Buffer
			if err := render.Data(&buf, "yaml", reports, true); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(oldYAML(t, reports, true), buf.String()); diff != "" {
				t.Errorf("(-JSONToYAML +streamed):\n%s", diff)
			}
		})
	}
	var buf bytes.Buffer
	if err := render.Data(&buf, "yaml", []any{}, true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(oldYAML(t, []any{}, true), buf.String()); diff != "" {
		t.Errorf("empty list (-JSONToYAML +streamed):\n%s", diff)
	}
}
