package render_test

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// The note on a tool that never fails on a conflict says how it writes
// the object now: helm-controller and Argo CD with only an Update entry
// write client-side; kustomize-controller applies server-side whatever
// its entry.
func TestWriterNote(t *testing.T) {
	tests := []struct {
		manager string
		op      metav1.ManagedFieldsOperationType
		want    string
		not     string
	}{
		{manager: "helm-controller", op: metav1.ManagedFieldsOperationApply, want: "the Helm SDK with server-side apply; it forces conflicts", not: "client-side"},
		{manager: "helm-controller", op: "", want: "it forces conflicts", not: "client-side"},
		{manager: "helm-controller", op: metav1.ManagedFieldsOperationUpdate, want: `"helm-controller" writes this object client-side now`, not: "server-side apply; it forces"},
		{manager: "argocd-controller", op: metav1.ManagedFieldsOperationUpdate, want: "Argo CD's sync with client-side apply", not: "it forces conflicts"},
		{manager: "kustomize-controller", op: metav1.ManagedFieldsOperationUpdate, want: "server-side apply; it forces conflicts", not: "client-side now"},
	}
	for _, tt := range tests {
		t.Run(tt.manager+" "+string(tt.op), func(t *testing.T) {
			r := &v1alpha1.ConflictReport{Message: "Apply failed with 1 conflict", ApplierOperation: tt.op,
				Conflicts: []v1alpha1.Conflict{{Manager: "kube-controller-manager", Operation: "Update", Subresource: "scale"}}}
			r.FieldManager = tt.manager
			r.Object = v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
			var buf bytes.Buffer
			render.ConflictExplanation(&buf, r, render.Options{Palette: render.NewPalette(false)}, remedy.Target{FieldManager: tt.manager})
			var note string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.HasPrefix(l, "  note: ") {
					note = l
				}
			}
			if !strings.Contains(note, tt.want) || strings.Contains(note, tt.not) {
				t.Errorf("note %q: want %q, not %q\n%s", note, tt.want, tt.not, buf.String())
			}
		})
	}
}
