package v1alpha1_test

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// A forced apply takes each owner's fields, owners in order; a handover
// is offered once per owner, never from the autoscaler's /scale writes.
func TestConflictGrouping(t *testing.T) {
	path := func(p ...any) pathlang.Path { return pathlang.Path(fieldpath.MakePathOrDie(p...)) }
	conflicts := []v1alpha1.Conflict{
		{Path: path("spec", "replicas"), Manager: v1alpha1.AutoscalerController, Subresource: "scale"},
		{Path: path("metadata", "labels", "tier"), Manager: "kubectl-label"},
		{Path: path("metadata", "labels", "app.kubernetes.io/name"), Manager: "kubectl-label"},
	}
	// (owners sorted as quoted: "kube-" before "kubec")
	want := `.spec.replicas from "kube-controller-manager" with subresource "scale"; .metadata.labels.tier, .metadata.labels["app.kubernetes.io/name"] from "kubectl-label"`
	if got := v1alpha1.Takes(conflicts); got != want {
		t.Errorf("Takes:\n got %s\nwant %s", got, want)
	}
	first := v1alpha1.FirstPerOwner(conflicts)
	if len(first) != 2 || first[0].Manager != v1alpha1.AutoscalerController || first[1].Path.String() != ".metadata.labels.tier" {
		t.Errorf("FirstPerOwner: %+v", first)
	}
	r := &v1alpha1.ConflictReport{Conflicts: conflicts}
	if r.AutoscalerTakesBack(conflicts[0]) {
		t.Error("taken back without an autoscaler")
	}
	r.Autoscalers = []v1alpha1.Autoscaler{{Name: "web"}}
	if !r.AutoscalerTakesBack(conflicts[0]) || r.AutoscalerTakesBack(conflicts[1]) {
		t.Error("only the autoscaler's /scale writes are taken back")
	}
}
