package conflict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

const (
	comparedApply      = "the apply"
	comparedFirstApply = "kubectl's first apply (a server dry run is one request: the steps kubectl sends after it can't be dry-run)"
)

// verify sends the apply as a server dry run and compares. It also
// returns the resourceVersion the server's answer is of ("" when there is
// none): another than the predicted live object's means a writer came in
// between, and the comparison is of two different objects.
func verify(ctx context.Context, dr Server, obj *unstructured.Unstructured, r *Simulation, o Options) (*v1alpha1.Verification, string, error) {
	against, compared, firstOnly := r, comparedApply, false
	if r.FirstApply != nil {
		against, compared, firstOnly = r.FirstApply, comparedFirstApply, true
		if r.Admission.Mutated() {
			// The mutating policies were evaluated on the last apply of
			// kubectl's sequence, not on the first, which the dry run is.
			return &v1alpha1.Verification{Status: v1alpha1.VerifyNotRun, Compared: compared, FirstApplyOnly: firstOnly, Differences: []string{}, ServerWarnings: []string{},
				Reason: "mutating admission policies change the object, and they were evaluated on the last apply of kubectl's sequence, not on the first, which is what a server dry run can send"}, "", nil
		}
	}
	v := &v1alpha1.Verification{Status: v1alpha1.VerifyAgrees, Compared: compared, FirstApplyOnly: firstOnly, Differences: []string{}}
	// core: a difference admission can't make (conflicts, managedFields):
	// the prediction is wrong, whatever it said of admission. other: a
	// difference the server's configuration does not explain.
	core, other := false, false
	admissionDiff := func(format string, args ...any) {
		other = true
		differs(v, format, args...)
	}
	diff := func(format string, args ...any) {
		core = true
		admissionDiff(format, args...)
	}
	defer func() { settle(v, against, r, core, other) }()
	deny := denial(against, r)
	out, warnings, err := dryRun(ctx, dr, obj, r, o)
	v.ServerWarnings = append([]string{}, warnings...)
	for _, w := range missedWarnings(against, warnings, err) {
		admissionDiff("warning predicted, not returned by the server: %s", w)
	}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsConflict(err) && errors.As(err, &status):
		compareConflict(status.Status(), against, diff)
	case apierrors.IsForbidden(err) && unauthorized(err):
		v.Status = v1alpha1.VerifyRefused
		v.Reason = "the server refused the dry run (" + err.Error() + "): nothing was compared"
	case err != nil && strings.Contains(err.Error(), "does not support dry run"):
		// A webhook with side effects: the server can't dry-run the apply.
		v.Status = v1alpha1.VerifyNotRun
		v.Reason = "the server can't dry-run the apply: " + err.Error()
	case err != nil && errors.As(err, &status) && deny != nil:
		// The prediction has admission refuse it too.
		if msg := status.Status().Message; msg != deny.Denied && !slices.Contains(deny.Denials, msg) {
			admissionDiff("denial: server %q, predicted %q", msg, deny.Denied)
			v.ServerDenied = msg
		}
	case err == nil && deny != nil:
		admissionDiff("the prediction has admission refuse the apply, the server applied: %s", deny.Denied)
		return v, answerVersion(out), nil
	case err != nil && errors.As(err, &status) && (status.Status().Code < 500 || strings.Contains(err.Error(), "webhook")):
		// Admission (a policy, a webhook) or validation refused what the
		// prediction says is applied: the server's configuration (its
		// flags) may be why.
		msg := status.Status().Message
		if v.ServerConfiguration = refusedBy(against.Result, r.Live, msg); len(v.ServerConfiguration) > 0 {
			differs(v, "the server refuses the apply, as its configuration (%s) decides: %s", strings.Join(v.ServerConfiguration, ", "), msg)
		} else {
			if apierrors.IsInvalid(err) {
				// 422: the kind's validation, which the prediction does
				// not model (but for sizes and encodings): not exact, and
				// the server's answer stands.
				r.Unchecked = append(r.Unchecked, notModelledValidation)
			}
			admissionDiff("the server refuses the apply, the prediction does not: %s", msg)
		}
		v.ServerDenied = msg
	case err != nil:
		return nil, "", fmt.Errorf("--verify: the server dry run failed: %w", err)
	default:
		if against.Message != "" {
			diff("the prediction has conflicts, the server applied: %s", against.Message)
			return v, answerVersion(out), nil
		}
		if o.Subresource == string(v1alpha1.SubresourceScale) {
			// The server answers with a Scale: compare the replicas, as
			// the parent's managedFields are not in it.
			want, _, _ := unstructured.NestedFieldNoCopy(against.Result.Object, "spec", "replicas")
			got, _, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "replicas")
			if fmt.Sprint(want) != fmt.Sprint(got) {
				diff("spec.replicas: server %v, predicted %v", got, want)
			}
			return v, answerVersion(out), nil
		}
		if err := compareAnswer(out, against, r, o, diff, admissionDiff); err != nil {
			return nil, "", err
		}
	}
	return v, answerVersion(out), nil
}

// notModelledValidation is the unchecked reason of a prediction whose
// apply the server's validation refused.
const notModelledValidation = "the apiserver's validation of the object's values (not modelled here)"

// compareConflict compares the server's conflict with the predicted one.
func compareConflict(st metav1.Status, against *Simulation, diff func(string, ...any)) {
	if against.Message == "" {
		diff("the server reports a conflict the prediction missed: %s", st.Message)
		return
	}
	if st.Message != against.Message {
		diff("message: server %q, predicted %q", st.Message, against.Message)
	}
	n := 0
	if st.Details != nil {
		n = len(st.Details.Causes)
	}
	if n != len(against.Conflicts) {
		diff("conflicts: server %d, predicted %d", n, len(against.Conflicts))
	}
}

// dryRun sends the apply as a server dry run (to /scale as a Scale).
func dryRun(ctx context.Context, dr Server, obj *unstructured.Unstructured, r *Simulation, o Options) (*unstructured.Unstructured, []string, error) {
	if o.ClientSide != nil {
		return dryRunClientSide(ctx, dr, obj, r, o)
	}
	send := obj
	if o.Subresource == string(v1alpha1.SubresourceScale) {
		// /scale takes an autoscaling/v1 Scale.
		replicas, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
		send = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"spec": map[string]any{"replicas": replicas}}}
		send.SetName(obj.GetName())
		send.SetNamespace(obj.GetNamespace())
	}
	opts := metav1.ApplyOptions{FieldManager: o.FieldManager, Force: o.Force, DryRun: []string{metav1.DryRunAll}}
	return dr.Apply(ctx, obj, send, opts, o.Subresource)
}

// dryRunClientSide sends o.ClientSide's write as a dry run: the same
// client-side patch, or a create when the object does not exist.
func dryRunClientSide(ctx context.Context, dr Server, obj *unstructured.Unstructured, r *Simulation, o Options) (*unstructured.Unstructured, []string, error) {
	if dr.Write == nil {
		return nil, nil, errors.New("--verify: this source can't dry-run a client-side write")
	}
	var patch []byte
	var pt types.PatchType
	if r.Action != v1alpha1.ActionCreate {
		var err error
		if patch, pt, err = HelmPatch(o.ClientSide.Original, obj, r.Live); err != nil {
			return nil, nil, fmt.Errorf("--verify: %w", err)
		}
	}
	return dr.Write(ctx, obj, patch, pt, o.FieldManager)
}

// compareAnswer compares the server's object (out) with the predicted
// one: managedFields (a core difference), then the whole object, what
// is not known here (unknown: allocated, generated) aside.
func compareAnswer(out *unstructured.Unstructured, against, r *Simulation, o Options, diff, admissionDiff func(string, ...any)) error {
	got, want := NormalizeManagedFields(out.GetManagedFields()), NormalizeManagedFields(against.ManagedFields)
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		diff("managedFields: server %s, predicted %s", gb, wb)
	}
	if o.Result == nil || r.Schema == nil {
		return nil
	}
	pred := *against
	if pred.Schema == nil {
		pred.Schema, pred.Defaults, pred.Storage, pred.Admission = r.Schema, r.Defaults, r.Storage, r.Admission
	}
	res, unknown, err := o.Result(&pred)
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	// A name the server generates (a token volume's) can't be
	// predicted: the server's is taken, the rest compared.
	admission.AdoptGeneratedNames(pred.Admission, res, out)
	lines, err := objectDifferences(r.Schema, out, res, unknown)
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	for _, l := range lines {
		admissionDiff("%s", l)
	}
	return nil
}

// missedWarnings are the warnings predicted of an apply the server
// applied that it did not return.
func missedWarnings(against *Simulation, got []string, err error) []string {
	var out []string
	if against.Admission != nil && err == nil {
		for _, w := range against.Admission.Warnings {
			if !slices.Contains(got, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// differs notes a difference.
func differs(v *v1alpha1.Verification, format string, args ...any) {
	v.Status = v1alpha1.VerifyDiffers
	v.Differences = append(v.Differences, fmt.Sprintf(format, args...))
}

// settle decides what the differences mean once all are listed. Those
// only what is not known here makes (admission not evaluated, validation
// not modelled, the server's configuration) are the server's answer for
// it (resolved); a core one (conflicts, managedFields) is the
// prediction's error, and so is any other when nothing was unknown.
func settle(v *v1alpha1.Verification, against, r *Simulation, core, other bool) {
	adm := against.Admission
	if adm == nil && against != r {
		// Evaluated on the last apply of kubectl's sequence (see denial).
		adm = r.Admission
	}
	inexact := adm != nil && !adm.Exact || len(r.Unchecked) > 0
	configured := len(v.ServerConfiguration) > 0
	if v.Status == v1alpha1.VerifyDiffers && !core && (inexact || configured && !other) {
		var why []string
		if adm != nil {
			why = append(why, adm.Reasons...)
		}
		why = append(why, r.Unchecked...)
		if configured {
			why = append(why, "the apiserver's "+strings.Join(v.ServerConfiguration, ", "))
		}
		v.Status = v1alpha1.VerifyResolved
		v.Reason = "the prediction was not exact (" + strings.Join(why, "; ") + "): the server's dry run answers for what is not evaluated here"
		if !inexact {
			v.Reason = "the apiserver's configuration (" + strings.Join(v.ServerConfiguration, ", ") + ") decides what no prediction knows: the server's dry run answers for it"
		}
	}
	if v.Status != v1alpha1.VerifyResolved {
		v.ServerDenied = ""
		v.ServerConfiguration = nil
	}
	v.Agrees = v.Status == v1alpha1.VerifyAgrees
}

// denial is the admission that refuses the apply compared with the
// server's dry run (against), nil when none does. Admission is evaluated
// on the last apply of kubectl's sequence (r), not on its first, which
// is what the dry run sends: a policy that refuses the object refuses
// it whatever the live object's history (applied client-side or not), so
// r's denial stands for the first apply's.
func denial(against, r *Simulation) *v1alpha1.AdmissionReport {
	switch {
	case denied(against) != "":
		return against.Admission
	case against != r && denied(r) != "":
		return r.Admission
	}
	return nil
}

// denied is the denial predicted of r's apply ("": none).
func denied(r *Simulation) string {
	if r.Admission == nil {
		return ""
	}
	return r.Admission.Denied
}

// unauthorized tells an authorization refusal (RBAC: "User ... cannot
// patch resource ...") from an admission denial, which may be a 403 too.
func unauthorized(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, " cannot ") && strings.Contains(msg, " resource ")
}

// NormalizeManagedFields drops times (each side stamps its own) and orders
// entries, so that two sets of managedFields compare.
func NormalizeManagedFields(in []metav1.ManagedFieldsEntry) []map[string]any {
	out := []map[string]any{}
	for _, e := range in {
		fields := map[string]any{}
		if e.FieldsV1 != nil {
			_ = json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields)
		}
		out = append(out, map[string]any{
			"manager": e.Manager, "operation": string(e.Operation), "subresource": e.Subresource,
			"apiVersion": e.APIVersion, "fields": fields,
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return fmt.Sprint(out[i]["manager"], out[i]["operation"], out[i]["subresource"], out[i]["apiVersion"]) < fmt.Sprint(out[j]["manager"], out[j]["operation"], out[j]["subresource"], out[j]["apiVersion"])
	})
	return out
}

// answerVersion is the resourceVersion of a dry run's answer.
func answerVersion(out *unstructured.Unstructured) string {
	if out == nil {
		return ""
	}
	return out.GetResourceVersion()
}
