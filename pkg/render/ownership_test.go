package render_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// now is the injected clock: a minute after the last write in the fixtures.
var now = time.Date(2026, 11, 22, 0, 12, 52, 0, time.UTC)

func loadObject(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

func analyze(t testing.TB, fixture string, f ownership.Filter, opts ownership.Options) *ownership.Report {
	t.Helper()
	r, err := ownership.Analyze(loadObject(t, fixture), opts)
	if err != nil {
		t.Fatalf("%s: %v", fixture, err)
	}
	return f.Apply(r)
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/render -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got), run go test ./pkg/render -update if the change is intended:\n%s", file, diff)
	}
}

type view func(io.Writer, *ownership.Report, render.Options) error

func fieldTable(unowned bool) view {
	return func(w io.Writer, r *ownership.Report, o render.Options) error {
		return render.FieldTable(w, r, o, unowned)
	}
}

func TestOwnershipViews(t *testing.T) {
	plain := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	with := func(f func(*render.Options)) render.Options {
		o := plain
		f(&o)
		return o
	}
	tests := []struct {
		name    string
		fixture string
		filter  ownership.Filter
		secrets bool
		opts    render.Options
		view    view
	}{
		{name: "deployment-table", fixture: "deployment.yaml", opts: plain, view: fieldTable(false)},
		{name: "deployment-wide", fixture: "deployment.yaml", opts: with(func(o *render.Options) { o.Wide = true }), view: fieldTable(false)},
		{name: "deployment-wide-absolute", fixture: "deployment.yaml", opts: with(func(o *render.Options) { o.Wide, o.Time, o.MaxValueWidth = true, render.TimeAbsolute, 12 }), view: fieldTable(false)},
		{name: "deployment-unowned", fixture: "deployment.yaml", filter: ownership.Filter{Unowned: true}, opts: plain, view: fieldTable(true)},
		{name: "deployment-unowned-below", fixture: "deployment.yaml", filter: ownership.Filter{Unowned: true, Fields: []string{".spec.strategy.*", ".spec.template.spec.containers[*].imagePullPolicy"}}, opts: plain, view: fieldTable(true)},
		{name: "deployment-shared", fixture: "deployment.yaml", filter: ownership.Filter{Shared: true}, opts: with(func(o *render.Options) { o.Time = render.TimeNone }), view: fieldTable(false)},
		{name: "deployment-manager-filter", fixture: "deployment.yaml", filter: ownership.Filter{Managers: []string{"kube-*"}}, opts: plain, view: fieldTable(false)},
		{name: "deployment-no-match", fixture: "deployment.yaml", filter: ownership.Filter{Managers: []string{"nobody"}}, opts: plain, view: fieldTable(false)},
		{name: "deployment-blame", fixture: "deployment.yaml", opts: plain, view: render.Blame},
		{name: "deployment-blame-manager", fixture: "deployment.yaml", filter: ownership.Filter{Managers: []string{"kube-*"}}, opts: plain, view: render.Blame},
		{name: "deployment-blame-field", fixture: "deployment.yaml", filter: ownership.Filter{Fields: []string{".spec.template.spec.containers[1].*", ".metadata.labels.*"}}, opts: plain, view: render.Blame},
		{name: "deployment-blame-shared", fixture: "deployment.yaml", filter: ownership.Filter{Shared: true}, opts: with(func(o *render.Options) { o.Time = render.TimeNone }), view: render.Blame},
		{name: "deployment-blame-unowned", fixture: "deployment.yaml", filter: ownership.Filter{Unowned: true, Fields: []string{".spec.template.spec.**"}}, opts: plain, view: render.Blame},
		{name: "deployment-blame-no-match", fixture: "deployment.yaml", filter: ownership.Filter{Managers: []string{"nobody"}}, opts: plain, view: render.Blame},
		{name: "configmap-blame-field", fixture: "configmap.yaml", filter: ownership.Filter{Fields: []string{".data.*"}, Managers: []string{"argocd-*"}}, opts: plain, view: render.Blame},
		{name: "deployment-tree", fixture: "deployment.yaml", opts: plain, view: render.Tree},
		{name: "deployment-tree-template", fixture: "deployment.yaml", filter: ownership.Filter{Fields: []string{".spec.template.**"}}, opts: plain, view: render.Tree},
		{name: "deployment-managers", fixture: "deployment.yaml", opts: plain, view: render.ManagerTable},
		{name: "deployment-managers-absolute", fixture: "deployment.yaml", opts: with(func(o *render.Options) { o.Time = render.TimeAbsolute }), view: render.ManagerTable},
		{name: "configmap-table", fixture: "configmap.yaml", opts: plain, view: fieldTable(false)},
		{name: "configmap-blame", fixture: "configmap.yaml", opts: plain, view: render.Blame},
		{name: "configmap-tree", fixture: "configmap.yaml", opts: plain, view: render.Tree},
		{name: "secret-wide", fixture: "secret.yaml", opts: with(func(o *render.Options) { o.Wide = true }), view: fieldTable(false)},
		{name: "secret-blame", fixture: "secret.yaml", opts: plain, view: render.Blame},
		{name: "secret-blame-shown", fixture: "secret.yaml", secrets: true, opts: plain, view: render.Blame},
		{name: "no-managed-fields-table", fixture: "configmap-no-managed-fields.yaml", opts: plain, view: fieldTable(false)},
		{name: "no-managed-fields-blame", fixture: "configmap-no-managed-fields.yaml", opts: plain, view: render.Blame},
		{name: "widget-table", fixture: "widget.yaml", opts: with(func(o *render.Options) { o.Wide = true }), view: fieldTable(false)},
		{name: "widget-blame", fixture: "widget.yaml", opts: plain, view: render.Blame},
		{name: "widget-tree", fixture: "widget.yaml", opts: plain, view: render.Tree},
		{name: "widget-managers", fixture: "widget.yaml", opts: plain, view: render.ManagerTable},
		{name: "deployment-table-color", fixture: "deployment.yaml", opts: with(func(o *render.Options) { o.Palette = render.NewPalette(true) }), view: fieldTable(false)},
		{name: "deployment-blame-color", fixture: "deployment.yaml", opts: with(func(o *render.Options) { o.Palette = render.NewPalette(true) }), view: render.Blame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := analyze(t, tt.fixture, tt.filter, ownership.Options{ShowSecretValues: tt.secrets})
			var buf bytes.Buffer
			if err := tt.view(&buf, r, tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".golden", buf.Bytes())
		})
	}
}

func TestData(t *testing.T) {
	tests := []struct {
		name     string
		format   string
		fixtures []string
		filter   ownership.Filter
	}{
		{name: "deployment-json", format: "json", fixtures: []string{"deployment.yaml"}},
		{name: "secret-yaml", format: "yaml", fixtures: []string{"secret.yaml"}},
		{name: "list-json", format: "json", fixtures: []string{"configmap.yaml", "configmap-no-managed-fields.yaml"}, filter: ownership.Filter{Fields: []string{".data.*"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var items []any
			for _, f := range tt.fixtures {
				items = append(items, analyze(t, f, tt.filter, ownership.Options{}))
			}
			var buf bytes.Buffer
			if err := render.Data(&buf, tt.format, items, false); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+"."+tt.format, buf.Bytes())
		})
	}
}

func TestDataUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	err := render.Data(&buf, "xml", []any{analyze(t, "configmap.yaml", ownership.Filter{}, ownership.Options{})}, false)
	if err == nil {
		t.Fatal("Data accepted format xml")
	}
	if buf.Len() != 0 {
		t.Errorf("Data wrote %q before failing", buf.String())
	}
}
