package conflict

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// ClientSide is a client-side write in place of the apply: Helm's upgrade
// of a release recorded as client-side apply, which helm upgrade's
// default (--server-side=auto) keeps client-side. Helm 4's
// kube.Client.Update (pkg/kube/client.go createPatch, v4.3.1) patches
// each object from the last revision's rendering of it (Original) to the
// manifest: for a kind of client-go's scheme a three-way strategic merge
// patch that also overwrites what the live object changed, for any other
// kind a two-way JSON merge patch; sent as an update by FieldManager. A
// field the last revision rendered and the manifest drops is deleted,
// whoever owns it now: no ownership keeps it.
type ClientSide struct {
	// Original is the object as the last revision rendered it; nil when
	// the revision did not have it, and Helm then takes the live object.
	Original *unstructured.Unstructured
}

// HelmPatch is the patch Helm 4's client-side upgrade sends for applied
// over live, from original (nil: live, as Helm does for an object its
// last revision did not have).
func HelmPatch(original, applied, live *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	if original == nil {
		original = live
	}
	oldData, err := json.Marshal(original.Object)
	if err != nil {
		return nil, "", err
	}
	newData, err := json.Marshal(applied.Object)
	if err != nil {
		return nil, "", err
	}
	gvk := applied.GroupVersionKind()
	if !IsBuiltin(gvk) {
		// (Helm's threeWayMergeForUnstructured is false on upgrade.)
		patch, err := jsonpatch.CreateMergePatch(oldData, newData)
		return patch, types.MergePatchType, err
	}
	currentData, err := json.Marshal(live.Object)
	if err != nil {
		return nil, "", err
	}
	versioned, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, "", err
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, "", err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(oldData, newData, currentData, meta, true)
	return patch, types.StrategicMergePatchType, err
}

// applyPatch patches live as the apiserver's patch handler does.
func applyPatch(live *unstructured.Unstructured, patch []byte, pt types.PatchType) (*unstructured.Unstructured, error) {
	if pt == types.MergePatchType {
		cur, err := json.Marshal(live.Object)
		if err != nil {
			return nil, err
		}
		out, err := jsonpatch.MergePatch(cur, patch)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		return u, u.UnmarshalJSON(out)
	}
	versioned, err := scheme.Scheme.New(live.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	// Integers as the apiserver reads them (int64, as its typed object's
	// map has them): merge keys compare by value and type, and a port 80
	// read as a float would not match the live one.
	var pm, cur map[string]any
	if err := utiljson.Unmarshal(patch, &pm); err != nil {
		return nil, err
	}
	liveJSON, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	if err := utiljson.Unmarshal(liveJSON, &cur); err != nil {
		return nil, err
	}
	out, err := strategicpatch.StrategicMergeMapPatch(cur, pm, versioned)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// simulateClientSide predicts in.ClientSide's write: a create by
// FieldManager when the object does not exist, else Helm's patch as an
// update. Nothing conflicts; every field the patch deletes is removed or
// reset, whoever owned it.
func simulateClientSide(in Input) (*Simulation, error) {
	r, live, err := newSimulation(in)
	if err != nil {
		return nil, err
	}
	name := ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
	patched := in.Applied.DeepCopy()
	if in.Live != nil {
		patch, pt, err := HelmPatch(in.ClientSide.Original, in.Applied, in.Live)
		if err != nil {
			return nil, fmt.Errorf("%s: Helm's client-side patch: %w", name, err)
		}
		if patched, err = applyPatch(in.Live, patch, pt); err != nil {
			return nil, fmt.Errorf("%s: the patch would fail: %w", name, err)
		}
	}
	// The server decodes the patched object with its defaults before its
	// field manager records the update: a deleted field that has one
	// comes back as the updater's.
	if ownership.IsSecret(patched.GetAPIVersion(), patched.GetKind()) {
		// (Its conversion to the internal version, before the field
		// manager: stringData written into data, not kept.)
		defaults.SecretStringData(patched.Object)
	}
	undefaulted := patched.DeepCopy()
	if src, _ := defaultsFor(in, in.Applied.GroupVersionKind()); src != nil {
		if c, ok := src.(defaults.Completer); ok {
			c.Complete(patched.Object)
		}
	}
	defaults.Finish(patched)
	failed := failedConversions{}
	fm, err := newFieldManager(in, live, failed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	result, err := fm.Update(live.DeepCopy(), patched, in.FieldManager)
	if len(failed) > 0 {
		return nil, unconvertible(name, in.Applied.GroupVersionKind(), live, failed)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the update would fail: %w", name, err)
	}
	res, ok := result.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected result type %T", name, result)
	}
	r.Result, r.ClientSide = res, true
	r.ManagedFields = res.GetManagedFields()
	if r.ManagedFields == nil {
		r.ManagedFields = []metav1.ManagedFieldsEntry{}
	}
	if in.Live == nil {
		return r, nil
	}
	removed, err := deletedBy(in, live, undefaulted)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	classifyRemovals(&r.ConflictReport, in, live, undefaulted, removed)
	return r, nil
}

// deletedBy lists the fields of live that res no longer has (parents and
// children), as the apply's removals are listed; metadata the server
// writes itself aside.
func deletedBy(in Input, live, res *unstructured.Unstructured) ([]fieldpath.Path, error) {
	strip := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		c := u.DeepCopy()
		c.SetManagedFields(nil)
		unstructured.RemoveNestedField(c.Object, "status")
		return c
	}
	before, err := in.Schema.ObjectToTyped(strip(live))
	if err != nil {
		return nil, err
	}
	after, err := in.Schema.ObjectToTyped(strip(res))
	if err != nil {
		return nil, err
	}
	bs, err := before.ToFieldSet()
	if err != nil {
		return nil, err
	}
	as, err := after.ToFieldSet()
	if err != nil {
		return nil, err
	}
	var removed []fieldpath.Path
	bs.Difference(as).Iterate(func(p fieldpath.Path) {
		removed = append(removed, p.Copy())
	})
	return removed, nil
}
