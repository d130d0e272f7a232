package handover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// ClientSideApplyManager is the manager kubectl's client-side apply writes
// as when no --field-manager is given.
const ClientSideApplyManager = ownership.ClientSideApplyManager

// lastAppliedPath is where client-side apply keeps what it applied last.
var lastAppliedPath = fieldpath.MakePathOrDie("metadata", "annotations", ownership.LastAppliedAnnotation)

// lastAppliedOps are the JSON patch operations of the edit.
func lastAppliedOps(e *v1alpha1.LastAppliedEdit) []write.PatchOp {
	if e.Deleted {
		return []write.PatchOp{write.RemoveAnnotationOp(e.Annotation)}
	}
	return []write.PatchOp{{Op: "replace", Path: write.AnnotationPointer(e.Annotation), Value: e.Value}}
}

// isClientSideApply tells whether req.From is a client-side apply manager
// of live, as kubectl itself decides before upgrading one to server-side
// apply: an Update entry of the main resource that owns the last-applied
// annotation, or kubectl's default client-side manager.
func isClientSideApply(entries []metav1.ManagedFieldsEntry, req Request) (owners []string, ok bool) {
	switch req.FromSubresource {
	case "", "-", "none":
	default:
		return nil, false
	}
	ok = req.From == ClientSideApplyManager
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
			continue
		}
		s, err := ownership.DecodeEntry(e)
		if err != nil || !s.Has(lastAppliedPath) {
			continue
		}
		owners = append(owners, e.Manager)
		ok = ok || e.Manager == req.From
	}
	return owners, ok
}

// planLastApplied returns the edit that takes fields out of the
// last-applied annotation of a client-side apply --from, or nil when it
// holds none of them. An annotation that can't be edited exactly is an
// error that says how to clear it first.
func planLastApplied(live *unstructured.Unstructured, req Request, mode v1alpha1.HandoverMode, fields []fieldpath.Path) (*v1alpha1.LastAppliedEdit, error) {
	ann, has := live.GetAnnotations()[ownership.LastAppliedAnnotation]
	if !has {
		return nil, nil
	}
	owners, csa := isClientSideApply(live.GetManagedFields(), req)
	if !csa {
		return nil, nil
	}
	e := &v1alpha1.LastAppliedEdit{Annotation: ownership.LastAppliedAnnotation, Manager: req.From, Removed: []pathlang.Path{}}
	if len(owners) > 0 && !contains(owners, req.From) {
		e.Manager = owners[0]
	}
	for _, p := range fields {
		if p.Equals(lastAppliedPath) {
			if mode != v1alpha1.HandoverRelease {
				// Handed over as it is: the new owner keeps the value.
				return nil, nil
			}
			e.Deleted = true
			return e, nil
		}
	}
	name := ownership.ObjectName(live.GetKind(), live.GetNamespace(), live.GetName())
	cant := func(why string) error {
		return &Error{
			Msg: fmt.Sprintf("%s: the %s annotation of client-side apply (%q) can't be edited exactly: %s; kubectl's next client-side apply would reset what it holds: remove the annotation first (its next apply then deletes nothing)", name, ownership.LastAppliedAnnotation, req.From, why),
			Fix: fixCommand(live, "annotate", resourceArg(live), ownership.LastAppliedAnnotation+"-"),
		}
	}
	var doc map[string]any
	if err := utiljson.Unmarshal([]byte(ann), &doc); err != nil || doc == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = "it is not JSON (" + oneLine(err.Error()) + ")"
		}
		return nil, cant(why)
	}
	if av, _ := doc["apiVersion"].(string); av != "" && av != live.GetAPIVersion() {
		return nil, cant(fmt.Sprintf("it was written at %s, the object is read at %s", av, live.GetAPIVersion()))
	}
	if k, _ := doc["kind"].(string); k != "" && k != live.GetKind() {
		return nil, cant(fmt.Sprintf("it holds a %s", k))
	}
	for _, p := range fields {
		removed, err := pathlang.Remove(doc, p)
		if err != nil {
			return nil, cant(oneLine(err.Error()))
		}
		if removed {
			e.Removed = append(e.Removed, pathlang.Path(p))
		}
	}
	if len(e.Removed) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, cant(oneLine(err.Error()))
	}
	e.Value = b.String()
	if !strings.HasSuffix(ann, "\n") {
		e.Value = strings.TrimSuffix(e.Value, "\n")
	}
	return e, nil
}

// fixCommand is a kubectl command on live, as words.
func fixCommand(live *unstructured.Unstructured, words ...string) []string {
	out := append([]string{"kubectl"}, words...)
	if ns := live.GetNamespace(); ns != "" {
		out = append(out, "-n", ns)
	}
	return out
}

// resourceArg names the object for kubectl with its version
// (kind.version.group/name), so that a kind served at several versions
// resolves to the one read here.
func resourceArg(live *unstructured.Unstructured) string {
	gvk := live.GroupVersionKind()
	k := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		k += "." + gvk.Version + "." + gvk.Group
	}
	return k + "/" + live.GetName()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
