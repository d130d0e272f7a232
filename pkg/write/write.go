package write

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// ParseDryRun reads --dry-run; a bare --dry-run means client (the flag's
// NoOptDefVal), "unchanged" is kubectl's old spelling of none.
func ParseDryRun(s string) (v1alpha1.DryRun, error) {
	switch v1alpha1.DryRun(s) {
	case v1alpha1.DryRunNone, v1alpha1.DryRunClient, v1alpha1.DryRunServer:
		return v1alpha1.DryRun(s), nil
	case "", "unchanged":
		return v1alpha1.DryRunNone, nil
	}
	return "", fmt.Errorf("--dry-run must be none, client or server, not %q", s)
}

// PatchOp is one JSON patch (RFC 6902) operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// ManagedFieldsOps replaces the managedFields. An empty list is written as
// [{}], which is how the apiserver is told to clear them ([] would leave
// them unchanged).
func ManagedFieldsOps(entries []metav1.ManagedFieldsEntry) []PatchOp {
	var v any = entries
	if len(entries) == 0 {
		v = []any{map[string]any{}}
	}
	return []PatchOp{{Op: "replace", Path: "/metadata/managedFields", Value: v}}
}

// AnnotationPointer is the JSON pointer of an annotation.
func AnnotationPointer(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// RemoveAnnotationOp removes an annotation.
func RemoveAnnotationOp(key string) PatchOp {
	return PatchOp{Op: "remove", Path: AnnotationPointer(key)}
}

// Patcher is what both the dynamic and the metadata clients offer: T is
// *unstructured.Unstructured or *metav1.PartialObjectMetadata.
type Patcher[T any] interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (T, error)
}

// Options are the options of every managedFields write.
type Options struct {
	// DryRun: DryRunServer sends the patch with dryRun=All; DryRunClient
	// must be handled by the caller (nothing is sent).
	DryRun v1alpha1.DryRun
	// FieldManager names the request (the apiserver records it only for
	// changes of values, which these patches do not make).
	FieldManager string
}

// ErrClientDryRun is returned by Patch for a client dry run: nothing was
// sent.
var ErrClientDryRun = errors.New("client dry run: nothing was sent")

// Patch is the one write kubectl-ssa makes outside a server-side apply: a
// JSON patch conditioned on resourceVersion, so that a write planned from
// an object another writer changed since fails with 409 Conflict instead
// of overwriting that change. Callers re-read and re-plan through
// RetryOnConflict.
func Patch[T any](ctx context.Context, p Patcher[T], name, resourceVersion string, ops []PatchOp, o Options) (T, error) {
	var zero T
	if o.DryRun == v1alpha1.DryRunClient {
		return zero, ErrClientDryRun
	}
	if resourceVersion == "" {
		return zero, errors.New("refusing to write without a resourceVersion precondition")
	}
	// The apiserver compares a resourceVersion set by a patch with the
	// stored one and answers 409 when they differ.
	all := append([]PatchOp{{Op: "replace", Path: "/metadata/resourceVersion", Value: resourceVersion}}, ops...)
	body, err := json.Marshal(all)
	if err != nil {
		return zero, err
	}
	po := metav1.PatchOptions{FieldManager: o.FieldManager}
	if o.DryRun == v1alpha1.DryRunServer {
		po.DryRun = []string{metav1.DryRunAll}
	}
	return p.Patch(ctx, name, types.JSONPatchType, body, po)
}

// DefaultBackoff is the retry policy after a 409: short, growing and
// jittered pauses, ten tries in all.
var DefaultBackoff = wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1.6, Jitter: 0.5, Steps: 10, Cap: 2 * time.Second}

// ConflictsError says that every try met a 409: the object kept changing.
type ConflictsError struct {
	Tries int
	Last  error
}

func (e *ConflictsError) Error() string {
	return fmt.Sprintf("the object kept changing while this ran (%d conflicts in a row): nothing more was written; run the command again", e.Tries)
}

func (e *ConflictsError) Unwrap() error { return e.Last }

// RetryOnConflict runs try until it returns anything but a 409 Conflict,
// pausing between tries as b says and stopping when ctx is done. try
// re-reads the object and plans again each time: attempt counts from 0.
func RetryOnConflict(ctx context.Context, b wait.Backoff, try func(ctx context.Context, attempt int) error) error {
	if b.Steps < 1 {
		b.Steps = 1
	}
	tries := b.Steps
	var last error
	for attempt := 0; attempt < tries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(b.Step())
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		last = try(ctx, attempt)
		if !apierrors.IsConflict(last) {
			return last
		}
	}
	return &ConflictsError{Tries: tries, Last: last}
}

// APIMessage is the apiserver's message of an API error, without the
// client's prefix.
func APIMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Message
	}
	return err.Error()
}
