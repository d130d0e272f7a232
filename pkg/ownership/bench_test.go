package ownership_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// BenchmarkAnalyze decodes the managedFields of large objects (see
// internal/benchdata) and builds their ownership reports.
func BenchmarkAnalyze(b *testing.B) {
	cases := []struct {
		name       string
		obj        *unstructured.Unstructured
		wantFields int
	}{
		// helm's 5,000 keys and label, kubectl-patch's 10 keys
		{name: "configmap-5000-keys", obj: benchdata.ConfigMap(5000), wantFields: 5011},
		// 3 labels and selector, 25 fields a container, replicas, 3 status fields
		{name: "deployment-50-containers", obj: benchdata.Deployment(50), wantFields: 3 + 50*25 + 1 + 3},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			r, err := ownership.Analyze(bc.obj, ownership.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Fields) != bc.wantFields || len(r.Unowned) != 0 {
				b.Fatalf("%d fields (want %d), unowned %v", len(r.Fields), bc.wantFields, r.Unowned)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ownership.Analyze(bc.obj, ownership.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
