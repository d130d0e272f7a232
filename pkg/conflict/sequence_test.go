package conflict_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// TestKubectlSequenceRetainsNoAnnotation: kubectl apply --server-side on a
// client-side-applied object writes the last-applied annotation itself,
// as "kubectl-last-applied", a manager the object does not have yet; the
// annotation is kubectl's bookkeeping, not a field the manifest dropped
// that another manager keeps.
func TestKubectlSequenceRetainsNoAnnotation(t *testing.T) {
	s := &state{}
	update{Manager: "kubectl-client-side-apply", Create: lastApplied("nginx:1")}.Run(t, s)
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, webWith("nginx:2")), FieldManager: "kubectl",
		Schema: conflict.BuiltinSchema(), HasStatus: true, KubectlUpgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.KubectlUpgrade) != 1 {
		t.Fatalf("the sequence was not followed: %+v", r.KubectlUpgrade)
	}
	for _, ret := range r.Retained {
		if ret.Path.APIServerString() == pathlang.Path(ownership.LastAppliedPath).APIServerString() {
			t.Errorf("the last-applied annotation is listed as retained by %+v", ret.Owners)
		}
	}
}

// TestCSAUpgradeFirst: Helm 4, upgrading a release recorded as
// client-side apply with --server-side=true, first moves the ownership
// "helm" holds through Update (Helm 3's writes) to its apply entry
// (csaupgrade), then applies: a changed value then conflicts with no one,
// while without the move the apply conflicts with "helm" itself.
func TestCSAUpgradeFirst(t *testing.T) {
	// What a create records: the labels map as well as its key.
	createdFields := []string{
		".spec.selector",
		".spec.template.metadata.labels",
		".spec.template.metadata.labels.app",
		`.spec.template.spec.containers[name="web"]`,
		`.spec.template.spec.containers[name="web"].image`,
		`.spec.template.spec.containers[name="web"].name`,
	}
	conflicted := want{
		Action:    v1alpha1.ActionApply,
		Conflicts: []conflictView{{Manager: "helm", Operation: "Update", Path: `.spec.template.spec.containers[name="web"].image`}},
		Message:   `Apply failed with 1 conflict: conflict with "helm" using apps/v1: .spec.template.spec.containers[name="web"].image`,
		Removed:   []string{},
		// The apply fails: the object stays as Helm 3 left it.
		Managed: []entryView{{Manager: "helm", Operation: "Update", APIVersion: "apps/v1", Fields: createdFields}},
	}
	tests := []struct {
		name       string
		csaUpgrade []string
		want       want
	}{
		{
			name: "without the move, helm's apply conflicts with helm's Update",
			want: conflicted,
		},
		{
			name:       "moved first, the apply succeeds and helm's Update entry is gone",
			csaUpgrade: []string{"helm"},
			want: want{
				Action:  v1alpha1.ActionApply,
				Removed: []string{},
				Managed: []entryView{{Manager: "helm", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields}},
			},
		},
		{
			name:       "a manager without Update ownership moves nothing",
			csaUpgrade: []string{"kubectl-client-side-apply"},
			want:       conflicted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state{}
			update{Manager: "helm", Create: webWith("nginx:1")}.Run(t, s)
			r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, webWith("nginx:2")), FieldManager: "helm",
				Schema: conflict.BuiltinSchema(), HasStatus: true, CSAUpgrade: tt.csaUpgrade})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, reportView(t, r)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			warned := false
			for _, w := range r.Warnings {
				warned = warned || strings.Contains(w, "csaupgrade")
			}
			if moved := len(tt.csaUpgrade) > 0 && tt.csaUpgrade[0] == "helm"; warned != moved {
				t.Errorf("warned of the move: %v, moved: %v (%q)", warned, moved, r.Warnings)
			}
		})
	}
}

// TestCSAUpgradeKeepsDefaultedProtocol: a Service Helm 3 created holds,
// through Update, the defaults the apiserver filled in (a port's
// protocol). Moved to helm's apply, the protocol is no longer applied
// (the render leaves it out), but the port is keyed protocol=TCP and the
// apiserver defaults it back: it is reset to the same value, as diff and
// the server say, not removed.
func TestCSAUpgradeKeepsDefaultedProtocol(t *testing.T) {
	const created = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},
"spec":{"type":"ClusterIP","sessionAffinity":"None","selector":{"app":"web"},"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":80}]}}`
	const render = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},
"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":80}]}}`
	s := &state{}
	update{Manager: "helm", Create: created}.Run(t, s)
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, render), FieldManager: "helm",
		Schema: conflict.BuiltinSchema(), HasStatus: true, CSAUpgrade: []string{"helm"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 0 {
		t.Errorf("removed %v, want none", r.Removed)
	}
	var got []string
	for _, rs := range r.Reset {
		got = append(got, fmt.Sprintf("%s=%v unchanged=%v", rs.Path, rs.Value, rs.Unchanged))
	}
	want := []string{
		".spec.sessionAffinity=None unchanged=true",
		".spec.type=ClusterIP unchanged=true",
		`.spec.ports[port=80,protocol="TCP"].protocol=TCP unchanged=true`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resets (-want +got)\n%s", diff)
	}
}
