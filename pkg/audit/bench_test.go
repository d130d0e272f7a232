package audit

import (
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// BenchmarkCheckManyManagers audits an object with 10,000 Apply managers
// that all apply one label (shared) and a key each: linear in managers.
func BenchmarkCheckManyManagers(b *testing.B) {
	obj := benchdata.ManyManagers(10000)
	in := Object{Ref: ownership.RefOf(obj), ManagedFields: obj.GetManagedFields()}
	opts := Options{Expect: []string{"manager-*"}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		findings := Check(in, opts)
		if i == 0 {
			if len(findings) != 1 || findings[0].Code != v1alpha1.CodeSharedAppliers || len(findings[0].SharedWith) != 9999 {
				b.Fatalf("got %d findings, want the label shared by all 10,000", len(findings))
			}
		}
	}
}
