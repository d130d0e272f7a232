package render_test

import (
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// BenchmarkDecodeAndRender is who-owns without the cluster: decode the
// managedFields of a large object and render a view, as the command does.
func BenchmarkDecodeAndRender(b *testing.B) {
	objects := []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{name: "configmap-5000-keys", obj: benchdata.ConfigMap(5000)},
		{name: "deployment-50-containers", obj: benchdata.Deployment(50)},
	}
	opts := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	color := opts
	color.Palette = render.NewPalette(true)
	views := []struct {
		name string
		view view
		opts render.Options
	}{
		{name: "table", view: fieldTable(false), opts: opts},
		{name: "table-color", view: fieldTable(false), opts: color},
		{name: "blame", view: render.Blame, opts: opts},
		{name: "tree", view: render.Tree, opts: opts},
	}
	for _, o := range objects {
		for _, v := range views {
			b.Run(o.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					r, err := ownership.Analyze(o.obj, ownership.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if err := v.view(io.Discard, r, v.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkData is -o json against -o yaml on the report of a ConfigMap of
// 20,000 keys. YAML used to convert the whole JSON with JSONToYAML (5 to 9
// times the memory of JSON); it streams now. The memory of a whole run,
// peak RSS, is measured by bench/output-memory.sh.
func BenchmarkData(b *testing.B) {
	r, err := ownership.Analyze(benchdata.ConfigMap(20000), ownership.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := render.Data(io.Discard, format, []any{r}, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
