package migrate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// undoRace is a Deployment migrated with --remove-last-applied, its
// backup, and a fake server where the controller writes the status right
// after the undo's restoring patch (adding the annotation back bumped the
// generation), so that the patch putting the entry's time back meets a
// 409. controller changes the object as that write does.
type undoRace struct {
	saved         []metav1.ManagedFieldsEntry
	file          string
	patches       [][]metav1.ManagedFieldsEntry // the managedFields each patch sent
	preconditions []string
}

func newUndoRace(t *testing.T, controller func(m *metav1.PartialObjectMetadata)) (*undoRace, v1alpha1.ObjectResult) {
	return newUndoRaceOn(t, controller, false)
}

// newUndoRaceOn is newUndoRace on a server that, when keepsTimes, keeps
// the stored times of a write that changes only managedFields times, as
// the apiserver does since 1.27.
func newUndoRaceOn(t *testing.T, controller func(m *metav1.PartialObjectMetadata), keepsTimes bool) (*undoRace, v1alpha1.ObjectResult) {
	t.Helper()
	orig := built(t, csaCreate, controllerStatus)
	saved := orig.ManagedFields
	then := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for i := range saved {
		saved[i].Time = &then
	}
	p, err := MakePlan(Object{Ref: orig.Ref, ManagedFields: saved, Annotations: orig.Annotations}, Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl", RemoveLastApplied: true,
		Served: func(schema.GroupVersionKind) bool { return true }, Now: then.Time})
	if err != nil || p.Action != ActionMigrate {
		t.Fatalf("plan: %v %+v", err, p)
	}
	la := orig.Annotations[ownership.LastAppliedAnnotation]
	b := Backup{Format: BackupFormat, Resource: deployments, Kind: "Deployment", Namespaced: true, Namespace: "ns", Name: "app", UID: "u1",
		ResourceVersion: "4", ManagedFields: saved, LastApplied: &la, Migrated: p.After}
	data, _ := json.Marshal(b)
	r := &undoRace{saved: saved, file: filepath.Join(t.TempDir(), "app.json")}
	if err := os.WriteFile(r.file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	live := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "u1", ResourceVersion: "5", ManagedFields: p.After}}
	c := fakeClient(live)
	c.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		var ops []write.PatchOp
		if err := json.Unmarshal(a.(clienttesting.PatchActionImpl).GetPatch(), &ops); err != nil {
			t.Fatal(err)
		}
		var sent []metav1.ManagedFieldsEntry
		raw, _ := json.Marshal(ops[1].Value)
		if err := json.Unmarshal(raw, &sent); err != nil {
			t.Fatal(err)
		}
		r.patches = append(r.patches, sent)
		r.preconditions = append(r.preconditions, precondition(t, a))
		o, err := c.Tracker().Get(deployments, "ns", "app")
		if err != nil {
			t.Fatal(err)
		}
		m := o.(*metav1.PartialObjectMetadata).DeepCopy()
		if m.ResourceVersion != precondition(t, a) {
			return true, nil, apierrors.NewConflict(deployments.GroupResource(), "app", nil)
		}
		if keepsTimes && len(r.patches) > 1 && SameManagedFields(m.ManagedFields, sent) && len(m.ManagedFields) == len(sent) {
			for i := range sent {
				sent[i].Time = m.ManagedFields[i].Time
			}
		}
		m.ManagedFields = sent
		if len(r.patches) == 1 {
			// The restoring patch: the annotation comes back, and the
			// server stamps its manager's entry with the time of the undo.
			m.Annotations = map[string]string{ownership.LastAppliedAnnotation: la}
			now := metav1.Now()
			for i := range m.ManagedFields {
				if m.ManagedFields[i].Manager == "kubectl-client-side-apply" {
					m.ManagedFields[i].Time = &now
				}
			}
		}
		m.ResourceVersion = strconv.Itoa(5 + len(r.patches))
		if err := c.Tracker().Update(deployments, m, "ns"); err != nil {
			t.Fatal(err)
		}
		if len(r.patches) == 1 {
			// The controller's write lands before the next patch.
			w := m.DeepCopy()
			controller(w)
			w.ResourceVersion = "9"
			if err := c.Tracker().Update(deployments, w, "ns"); err != nil {
				t.Fatal(err)
			}
		}
		return true, m, nil
	})
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	return r, undoOne(context.Background(), Clients{Metadata: c}, r.file, v1alpha1.DryRunNone, false, backoff)
}

// The controller's status write between the undo's two patches: the
// undo restored the object, and says so (not "already as in the
// backup"), then puts the entry's time back over the controller's write.
func TestUndoControllerWritesBetweenPatches(t *testing.T) {
	later := metav1.NewTime(time.Now().Add(time.Minute).Truncate(time.Second))
	r, res := newUndoRace(t, func(m *metav1.PartialObjectMetadata) {
		for i := range m.ManagedFields {
			if m.ManagedFields[i].Subresource == "status" {
				m.ManagedFields[i].Time = &later
			}
		}
	})
	if res.Result != v1alpha1.ResultMigrated || res.Reason != "" || len(res.Changes) != 1 {
		t.Fatalf("result %s (%s), changes %+v: want restored", res.Result, res.Reason, res.Changes)
	}
	if len(r.patches) != 3 || r.preconditions[2] != "9" {
		t.Fatalf("patches guarded by %v, want the restoring one, the 409, then one guarded by the controller's write (9)", r.preconditions)
	}
	for _, e := range r.patches[2] {
		want := r.saved[0].Time
		if e.Subresource == "status" {
			want = &later // the controller's own write stays as it made it
		}
		if !e.Time.Equal(want) {
			t.Errorf("%s (%s) put back at %v, want %v", e.Manager, e.Subresource, e.Time, want)
		}
	}
}

// A writer that changes the restored managedFields right after the
// restore: the undo restored the object, and leaves that write alone.
func TestUndoWriterChangesManagedFieldsAfterRestore(t *testing.T) {
	_, res := newUndoRace(t, func(m *metav1.PartialObjectMetadata) {
		m.ManagedFields = append(m.ManagedFields, metav1.ManagedFieldsEntry{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:x":{}}}}`)})
	})
	want := "its kubectl-client-side-apply entry keeps the time of the undo: another writer changed the object right after the restore"
	if res.Result != v1alpha1.ResultMigrated || res.Reason != want {
		t.Errorf("result %s (%s), want restored (%s)", res.Result, res.Reason, want)
	}
}

// The apiserver keeps the stored times of a write that changes only
// managedFields times: the undo restored the object, and says that the
// entry keeps the time of the undo rather than claim the saved one.
func TestUndoSaysTheServerKeptTheTime(t *testing.T) {
	_, res := newUndoRaceOn(t, func(*metav1.PartialObjectMetadata) {}, true)
	want := "its kubectl-client-side-apply entry keeps the time of the undo: the apiserver ignores a write that changes only managedFields times"
	if res.Result != v1alpha1.ResultMigrated || res.Reason != want {
		t.Errorf("result %s (%s), want restored (%s)", res.Result, res.Reason, want)
	}
}
