package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// DryRun is the value of --dry-run.
type DryRun string

// Dry-run modes, as kubectl's.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// ParseDryRun reads --dry-run; a bare --dry-run means client.
func ParseDryRun(s string) (DryRun, error) {
	switch DryRun(s) {
	case DryRunNone, DryRunClient, DryRunServer:
		return DryRun(s), nil
	case "", "unchanged":
		return DryRunNone, nil
	}
	return "", fmt.Errorf("--dry-run must be none, client or server, not %q", s)
}

// PatchOp is one JSON patch operation.
type PatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	Value interface{} `json:"value,omitempty"`
}

// Writer rewrites managedFields, and nothing else, safely: every patch is
// conditioned on the resourceVersion the plan was made from, so a write
// that raced with another writer fails with 409 Conflict instead of
// overwriting it; the caller re-reads and re-plans.
type Writer struct {
	Resource     dynamic.ResourceInterface
	DryRun       DryRun
	FieldManager string
}

// ManagedFieldsOps replaces the managedFields. An empty list is written as
// [{}], which is how the apiserver is told to clear them ([] would leave
// them unchanged).
func ManagedFieldsOps(entries []metav1.ManagedFieldsEntry) []PatchOp {
	var v interface{} = entries
	if len(entries) == 0 {
		v = []interface{}{map[string]interface{}{}}
	}
	return []PatchOp{{Op: "replace", Path: "/metadata/managedFields", Value: v}}
}

// RemoveAnnotationOp removes an annotation.
func RemoveAnnotationOp(key string) PatchOp {
	return PatchOp{Op: "remove", Path: "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)}
}

// Patch sends ops with the live object's resourceVersion as precondition.
// With client dry run it sends nothing and returns nil.
func (w Writer) Patch(ctx context.Context, live *unstructured.Unstructured, ops []PatchOp) (*unstructured.Unstructured, error) {
	if w.DryRun == DryRunClient {
		return nil, nil
	}
	all := append([]PatchOp{{Op: "replace", Path: "/metadata/resourceVersion", Value: live.GetResourceVersion()}}, ops...)
	body, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	opts := metav1.PatchOptions{FieldManager: w.FieldManager}
	if w.DryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return w.Resource.Patch(ctx, live.GetName(), types.JSONPatchType, body, opts)
}
