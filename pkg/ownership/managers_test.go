package ownership_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

func TestIsCSALeftover(t *testing.T) {
	owning := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)}
	}
	yes := true
	controller := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u", Controller: &yes}}
	sts := map[string]string{ownership.LastAppliedAnnotation: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"}}` + "\n"}
	tests := []struct {
		name  string
		e     metav1.ManagedFieldsEntry
		kind  string
		ann   map[string]string
		refs  []metav1.OwnerReference
		wants bool
	}{
		{name: "kubectl's client-side apply", e: owning("kubectl-client-side-apply"), kind: "StatefulSet", ann: sts, wants: true},
		{name: "kubectl's client-side apply of an owned object", e: owning("kubectl-client-side-apply"), kind: "StatefulSet", ann: sts, refs: controller, wants: true},
		{name: "old kubectl's", e: owning("kubectl"), kind: "StatefulSet", ann: sts, wants: true},
		{name: "another name, no owner", e: owning("deploy-script"), kind: "StatefulSet", ann: sts, wants: true},
		// The StatefulSet controller's copy on a ControllerRevision.
		{name: "a controller's copy on an owned object", e: owning("kube-controller-manager"), kind: "ControllerRevision", ann: sts, refs: controller},
		{name: "a copy of another kind, whoever wrote it", e: owning("kubectl-client-side-apply"), kind: "ControllerRevision", ann: sts},
		{name: "a controller's copy, kind unknown", e: owning("my-operator"), kind: "Widget", ann: map[string]string{ownership.LastAppliedAnnotation: "not json"}, refs: controller},
		{name: "an entry not owning the annotation", e: metav1.ManagedFieldsEntry{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}, kind: "StatefulSet", ann: sts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownership.IsCSALeftover(tt.e, tt.kind, tt.ann, tt.refs); got != tt.wants {
				t.Errorf("IsCSALeftover = %v, want %v", got, tt.wants)
			}
		})
	}
}
