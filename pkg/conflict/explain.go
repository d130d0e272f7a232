package conflict

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// Target is what a Source knows of the object a manifest names.
type Target struct {
	// Live is the object with its managedFields; nil when it does not
	// exist (the apply creates it).
	Live *unstructured.Unstructured
	// HasStatus: the kind has a status subresource.
	HasStatus bool
	// Notes are said in the report (how the live object was found).
	Notes []string
	// ConversionWebhook: a custom resource whose versions a webhook
	// converts, when managers were recorded at other versions.
	ConversionWebhook bool
	// Storage prunes a custom resource applied at a version other than
	// its storage version, as the apiserver stores it (nil: nothing to
	// prune).
	Storage *defaults.Structural
	// ServerMinor is the apiserver's Kubernetes minor where the kind's
	// prediction depends on it (NeedsServerMinor); 0: the newest known.
	ServerMinor int
	// KeepsEmptiedMaps: the apiserver keeps a map an apply empties as {}
	// (KeepsEmptiedMaps); set only when the manifest holds a {}.
	KeepsEmptiedMaps bool
	// Unverifiable says why the server can't dry-run the apply now (its
	// namespace is created earlier in the same input); "" when it can.
	Unverifiable string
}

// Source is where an explanation reads what the apiserver would know: the
// live object, the schema of its kind and which versions are served. A
// cluster and a set of saved files both are one.
type Source interface {
	// Target finds the live object obj names; obj's namespace is
	// defaulted as the apiserver would.
	Target(ctx context.Context, obj *unstructured.Unstructured) (*Target, error)
	// Schema types the kind of applied at its version and at every
	// version live's managedFields mention. A nil converter means the
	// source has none and note says why (TypeConverter then falls back once,
	// for every source alike); with a converter, a note is a caveat the
	// report repeats.
	Schema(ctx context.Context, applied, live *unstructured.Unstructured) (tc managedfields.TypeConverter, note string, err error)
	// ScaleSchema types autoscaling/v1 Scale for the kind's /scale.
	ScaleSchema(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error)
	// Served tells whether a kind is served at a version (nil: all).
	Served() func(schema.GroupVersionKind) bool
	// Autoscalers lists the HPAs of a namespace (AutoscalersOf).
	AutoscalerLister
}

// Server is what Verify asks the server: dry runs, with the warnings
// the server answered them with.
type Server struct {
	// Apply sends body (obj itself, or a Scale for /scale) as an apply
	// to the object obj names.
	Apply func(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, []string, error)
	// Write sends a client-side write: patch (of type pt) to the object
	// obj names, or obj's create when patch is nil, as manager. Nil: the
	// server can't be asked one (Verify of Helm's client-side upgrade
	// then fails).
	Write func(ctx context.Context, obj *unstructured.Unstructured, patch []byte, pt types.PatchType, manager string) (*unstructured.Unstructured, []string, error)
}

// Options are the apply to explain.
type Options struct {
	FieldManager   string
	Force          bool
	Subresource    string
	KubectlUpgrade bool
	// CSAUpgrade: see Input.CSAUpgrade.
	CSAUpgrade []string
	// Result, for Verify, completes the prediction into the object the
	// server stores (diff.Result), which is then compared with the server's
	// dry-run object; nil compares managedFields and conflicts only.
	Result ResultFunc
	// AlsoForced also predicts the forced apply when the apply conflicts
	// (Simulation.Forced), from what was read once.
	AlsoForced bool
	// ClientSide predicts Helm's client-side upgrade instead of an apply
	// (see ClientSide).
	ClientSide *ClientSide
	// InputAutoscalers are the HorizontalPodAutoscalers of the input
	// (a render's own): a reset of .spec.replicas of an object they
	// target is one they undo.
	InputAutoscalers []unstructured.Unstructured
	// Unverifiable says why Verify can't dry-run this write ("" when it
	// can): then the verification is not run, with this reason.
	Unverifiable string
}

// TypeConverter types applied (and live's managedFields versions) with
// src's schema, or falls back, the same way for every source: a built-in
// kind has the schema compiled into kubectl-ssa; anything else is typed by
// deduction, as the apiserver types a CRD without a structural schema.
// The warnings say which and why.
func TypeConverter(ctx context.Context, src Source, applied, live *unstructured.Unstructured) (managedfields.TypeConverter, []string, error) {
	gvk := applied.GroupVersionKind()
	tc, why, err := src.Schema(ctx, applied, live)
	switch {
	case err != nil:
		return nil, nil, err
	case tc != nil && why != "":
		return tc, []string{why}, nil
	case tc != nil:
		return tc, nil, nil
	case IsBuiltin(gvk):
		return BuiltinSchema(), []string{fmt.Sprintf("the schema of %s could not be read (%s): used the schema compiled into kubectl-ssa instead", gvk.GroupVersion(), why)}, nil
	}
	return managedfields.NewDeducedTypeConverter(), []string{fmt.Sprintf("no schema for %s (%s): typed by deduction, every list atomic", gvk, why)}, nil
}

// Predict predicts the apply of st's manifest as o asks, from what was
// read (st) alone: no request, and st is left as it was, so that another
// way of writing can be predicted from the same read.
func Predict(st *State, o Options) (r *Simulation, err error) {
	defer func() { err = SecretError(st.Manifest, err) }()
	t := st.Target
	in := Input{
		Live: t.Live.DeepCopy(), // st is left as it was

		Applied:        st.Applied.DeepCopy(),
		FieldManager:   o.FieldManager,
		Force:          o.Force,
		Subresource:    o.Subresource,
		Schema:         st.Schema,
		CRD:            IsCustom(st.Applied.GroupVersionKind()),
		Served:         st.Served,
		HasStatus:      t.HasStatus,
		KubectlUpgrade: o.KubectlUpgrade,
		CSAUpgrade:     o.CSAUpgrade,
		ClientSide:     o.ClientSide,
		ScaleSchema:    st.ScaleSchema,

		ConversionWebhook: t.ConversionWebhook,
		ServerMinor:       t.ServerMinor,
		KeepsEmptiedMaps:  t.KeepsEmptiedMaps,
	}
	if r, err = predictOne(st, in); err != nil {
		return nil, err
	}
	r.Applied = st.Sent
	if !st.AdmissionRead {
		r.Warnings = append(r.Warnings, "admission (policies, webhooks, built-in plugins) is not evaluated without a cluster: check against one with kubectl ssa explain-conflict --verify")
	}
	if (o.AlsoForced || st.Admission != nil && admissionActs(st.Admission, st.AdmissionRequest, st.Sent, t.Live)) && !o.Force && len(r.Conflicts) > 0 {
		// The forced apply is what a user who takes the fields sends:
		// admission sees it.
		forced := in
		forced.Force = true
		if r.Forced, err = predictOne(st, forced); err != nil {
			return nil, err
		}
		r.ForcedAdmission = r.Forced.Admission
	}
	noteAutoscalers(r, st.Sent, t.Live, st.Autoscalers, st.AutoscalersWarning, o.InputAutoscalers)
	return r, nil
}

// predictOne simulates one write (in) and completes what the server
// would do besides: the body's checks, what validation is not modelled
// here, the defaults, the storage version, admission.
func predictOne(st *State, in Input) (*Simulation, error) {
	var r *Simulation
	var err error
	if in.Subresource == string(v1alpha1.SubresourceScale) {
		r, err = SimulateScale(in)
	} else {
		r, err = Simulate(in)
	}
	if err != nil {
		return nil, err
	}
	r.Warnings = append(append(r.Warnings, st.Target.Notes...), st.SchemaWarnings...)
	if err := bodyChecks(r, in, st.Rewritten); err != nil {
		return nil, err
	}
	if r.Message == "" && r.Result != nil {
		r.Unchecked = duplicatePortNames(r.Result)
		r.Warnings = append(r.Warnings, serverSettingCaveats(r.Result, in.Live)...)
		if first := r.FirstApply; first != nil && first.Result != nil {
			// kubectl's sequence stops at its first apply when the
			// server refuses that one: client-side apply's manager
			// still holds what the manifest no longer sets, beside
			// what it sets now.
			for _, u := range duplicatePortNames(first.Result) {
				if !slices.Contains(r.Unchecked, u) {
					r.Unchecked = append(r.Unchecked, "kubectl's first apply, before it moves client-side apply's ownership, leaves "+u)
				}
			}
		}
	}
	r.Schema = st.Schema
	r.Defaults, _ = defaultsFor(in, r.Result.GroupVersionKind())
	r.Storage = st.Target.Storage
	if st.Admission != nil && r.Message == "" {
		evaluateAdmission(r, st, in)
	}
	return r, nil
}

// evaluateAdmission evaluates the cluster's admission (st.Admission) on
// the predicted object: a denial is what the apiserver would answer.
func evaluateAdmission(r *Simulation, st *State, in Input) {
	req := st.AdmissionRequest
	req.Object, req.Old, req.Subresource = r.Result, in.Live, in.Subresource
	req.FieldManager = in.FieldManager
	var defaulted *unstructured.Unstructured // computed once, when asked
	req.Defaulted = func() *unstructured.Unstructured {
		if defaulted == nil {
			defaulted, _ = Defaulted(r)
		}
		return defaulted
	}
	req.Default = func(obj *unstructured.Unstructured) {
		if c, ok := r.Defaults.(defaults.Completer); ok {
			c.Complete(obj.Object)
		}
		defaults.Finish(obj)
	}
	if s, ok := st.Schema.(*Schema); ok {
		if types, ref, ok := s.TypeOf(r.Result.GroupVersionKind()); ok && ref.NamedType != nil {
			req.Schema, req.TypeName = types, *ref.NamedType
		}
	}
	r.Admission = admission.Evaluate(st.Admission, req)
	if r.Admission.Denied != "" {
		// What the apiserver would answer.
		r.Message = r.Admission.Denied
	} else if r.Admission.Mutated() {
		r.Unchecked = append(r.Unchecked, duplicateKeys(r.Admission, req.Defaulted(), st.Schema)...)
	}
}

// Verify sends the apply r predicts as a server dry run (dr) and
// compares (r.Verify). A writer between the read and the dry run (a
// controller's status update) makes the server answer for another
// object: then st is read again (read), predicted again and compared
// again, a few times; the prediction compared last is returned.
func Verify(ctx context.Context, dr Server, read func(context.Context) (*State, error), st *State, r *Simulation, o Options) (_ *Simulation, err error) {
	defer func() { err = SecretError(st.Manifest, err) }()
	if why := st.Target.Unverifiable + o.Unverifiable; why != "" {
		r.Verify = &v1alpha1.Verification{Status: v1alpha1.VerifyNotRun, Compared: comparedApply, Differences: []string{}, ServerWarnings: []string{}, Reason: why}
		return r, nil
	}
	for attempt := 1; ; attempt++ {
		v, rv, err := verify(ctx, dr, st.Sent, r, o)
		if err != nil {
			return nil, err
		}
		r.Verify = v
		if v.Agrees || rv == "" || r.Live == nil || rv == r.Live.GetResourceVersion() || attempt == verifyAttempts {
			return r, nil
		}
		if st, err = read(ctx); err != nil {
			return nil, err
		}
		if r, err = Predict(st, o); err != nil {
			return nil, err
		}
	}
}

// bodyChecks says what the server's reading of the apply body rewrote,
// and refuses a result over the server's size limits.
func bodyChecks(r *Simulation, in Input, rewritten bool) error {
	if rewritten {
		r.Warnings = append(r.Warnings, rewrittenWarning)
	}
	if r.Message == "" && in.Subresource == "" {
		if err := checkEncoding(r.Result); err != nil {
			return err
		}
		return checkSize(r.Result)
	}
	return nil
}

// admissionActs tells, cheaply, whether admission may say anything of
// the apply of sent over live (the labels of both, as a forced apply
// keeps live's): only then is the forced apply predicted for it.
func admissionActs(c *admission.Config, req admission.Request, sent, live *unstructured.Unstructured) bool {
	probe := sent.DeepCopy()
	if live != nil {
		labels := live.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range sent.GetLabels() {
			labels[k] = v
		}
		probe.SetLabels(labels)
	}
	req.Object, req.Old = probe, live
	matchOnly := *c
	matchOnly.Policies = nil // whether they match is enough here
	r := admission.Evaluate(&matchOnly, req)
	return len(r.Steps) > 0 || !r.Exact
}

// verifyAttempts bounds the predictions --verify compares when the object
// keeps changing under it.
const verifyAttempts = 5

// valueInError is how structured-merge-diff quotes a value in a
// validation error: Go's %#v of it, whose braces nest ("[]interface {}{...}").
const valueInError = "&value.valueUnstructured{"

// redactedError hides the values a Secret's validation error quotes.
type redactedError struct{ err error }

func (e redactedError) Error() string {
	return redactQuotedValues(e.err.Error())
}

// redactQuotedValues replaces each value structured-merge-diff quotes in
// msg, up to the brace that closes it (braces inside quoted strings
// aside), with a placeholder; an unclosed one to the end of msg.
func redactQuotedValues(msg string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, valueInError)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		b.WriteString("a value (" + v1alpha1.Redacted + ")")
		msg = msg[i+closingBrace(msg[i+len(valueInError):])+len(valueInError):]
	}
}

// closingBrace returns the length of s up to and including the brace that
// closes an opened one, skipping Go-quoted strings and runes; len(s) when
// none does.
func closingBrace(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'', '`':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' && q != '`' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

func (e redactedError) Unwrap() error { return e.err }

// duplicatePortNames finds what the apiserver's validation refuses and
// the field manager keeps: two items of a ports list (a container's, a
// Service's) with one name. An apply that merges a port whose number was
// edited by hand with the declared one makes them (argo-cd#25474).
// Validation is not modelled here: the prediction says it is unchecked.
func duplicatePortNames(obj *unstructured.Unstructured) []string {
	gvk := obj.GroupVersionKind()
	type list struct {
		path  string
		ports any
	}
	var lists []list
	if gvk.Group == "" && gvk.Kind == "Service" {
		ports, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "ports")
		lists = append(lists, list{".spec.ports", ports})
	}
	if path := defaults.PodSpecPath(gvk.Group, gvk.Kind); path != nil {
		spec, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
		specMap, _ := spec.(map[string]any)
		for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
			cs, _ := specMap[field].([]any)
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				name, _ := cm["name"].(string)
				lists = append(lists, list{fmt.Sprintf(".%s.%s[name=%q].ports", strings.Join(path, "."), field, name), cm["ports"]})
			}
		}
	}
	var out []string
	for _, l := range lists {
		items, _ := l.ports.([]any)
		seen := map[string]bool{}
		for _, item := range items {
			m, _ := item.(map[string]any)
			if name, _ := m["name"].(string); name != "" {
				if seen[name] {
					out = append(out, fmt.Sprintf("two ports named %q in %s: the apiserver's validation refuses duplicate port names, which is not modelled here", name, l.path))
				}
				seen[name] = true
			}
		}
	}
	return out
}

// duplicateKeys says when the mutating policies' changes leave two items
// of one key in a keyed list, which the server's validation refuses.
func duplicateKeys(a *v1alpha1.AdmissionReport, defaulted *unstructured.Unstructured, tc managedfields.TypeConverter) []string {
	obj := defaulted.DeepCopy()
	admission.Apply(a, obj)
	if _, err := tc.ObjectToTyped(obj); err != nil && strings.Contains(err.Error(), "duplicate") {
		return []string{"the mutating policies' changes leave duplicate keys, which the server's validation refuses: " + err.Error()}
	}
	return nil
}
