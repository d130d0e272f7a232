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
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
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
	// source has none and note says why (Explain then falls back once,
	// for every source alike); with a converter, a note is a caveat the
	// report repeats.
	Schema(ctx context.Context, applied, live *unstructured.Unstructured) (tc managedfields.TypeConverter, note string, err error)
	// ScaleSchema types autoscaling/v1 Scale for the kind's /scale.
	ScaleSchema(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error)
	// Served tells whether a kind is served at a version (nil: all).
	Served() func(schema.GroupVersionKind) bool
}

// DryRunner sends an apply to the server as a dry run; the sources that
// can are used by --verify.
type DryRunner interface {
	// DryRunApply sends body (obj itself, or a Scale for /scale) to the
	// object obj names.
	DryRunApply(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, error)
}

// AdmissionReader is a source that knows the cluster's admission: the
// policies, webhooks and classes of admission.Config, and how obj's
// request is matched (its resource, its namespace's labels).
type AdmissionReader interface {
	Admission(ctx context.Context, obj *unstructured.Unstructured) (*admission.Config, admission.Request, error)
}

// Resolver is a source that puts a manifest's namespace as Target would
// (defaulted, checked) without a round trip, and may start reading what
// the prediction needs next (its schema). It tells whether the autoscalers
// and admission may then be read while the live object is, instead of
// after it (false: after it; an error is left for Target to return).
type Resolver interface {
	Resolve(ctx context.Context, obj *unstructured.Unstructured) bool
}

// WarningDryRunner is a DryRunner that also returns the warnings the
// server answered the dry run with.
type WarningDryRunner interface {
	DryRunApplyWarnings(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, []string, error)
}

// PatchDryRunner sends a client-side write as a server dry run: patch
// (of type pt) to the object obj names, or obj's create when patch is nil,
// as manager; with the server's warnings.
type PatchDryRunner interface {
	DryRunWrite(ctx context.Context, obj *unstructured.Unstructured, patch []byte, pt types.PatchType, manager string) (*unstructured.Unstructured, []string, error)
}

// Options are the apply to explain.
type Options struct {
	FieldManager   string
	Force          bool
	Subresource    string
	KubectlUpgrade bool
	// CSAUpgrade: see Input.CSAUpgrade.
	CSAUpgrade []string
	// Verify also sends the apply as a server dry run (the Source must be
	// a DryRunner) and compares.
	Verify bool
	// Result, with Verify, completes the prediction into the object the
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

// Explain predicts the apply of one manifest against what src knows, and
// with Verify compares the prediction with the server's dry run.
func Explain(ctx context.Context, src Source, manifest *unstructured.Unstructured, o Options) (r *Simulation, err error) {
	if ownership.IsSecret(manifest.GetAPIVersion(), manifest.GetKind()) {
		defer func() {
			if err != nil {
				err = redactedError{err}
			}
		}()
	}
	obj := manifest.DeepCopy()
	// The autoscalers are listed while the live object and the schema are
	// read: the list costs a round trip, not a serial one. It starts once
	// the namespace is defaulted (by Resolve, or else by Target): a
	// manifest without one must not list every namespace's autoscalers.
	// Nothing else in this run lists them meanwhile; the memo is guarded
	// all the same. Admission is read meanwhile too (once a run).
	type hpaResult struct {
		list    []v1alpha1.Autoscaler
		warning string
	}
	type admissionResult struct {
		config *admission.Config
		req    admission.Request
		err    error
	}
	var hpaDone chan hpaResult
	var admissionDone chan admissionResult
	// sent is the manifest as sent, its namespace defaulted: the reads
	// read it (the simulation may change obj meanwhile), nothing writes it.
	var sent *unstructured.Unstructured
	startReads := func() {
		hpaDone = make(chan hpaResult, 1)
		probe := sent
		go func() {
			l, w := AutoscalersOf(ctx, src, probe)
			hpaDone <- hpaResult{l, w}
		}()
		if ar, ok := src.(AdmissionReader); ok {
			admissionDone = make(chan admissionResult, 1)
			go func() {
				c, req, err := ar.Admission(ctx, probe)
				admissionDone <- admissionResult{c, req, err}
			}()
		}
	}
	resolver, ok := src.(Resolver)
	resolved := ok && resolver.Resolve(ctx, obj)
	// The manifest as the server reads it (named with its namespace,
	// once defaulted).
	obj, rewritten, err := ApplyBody(obj)
	if err != nil {
		return nil, err
	}
	if resolved {
		sent = obj.DeepCopy()
		startReads()
		if gvk := obj.GroupVersionKind(); !IsCustom(gvk) {
			// The kind's defaults are decoded meanwhile too (memoized:
			// the prediction's own lookup waits for this one).
			go defaults.Builtin(gvk)
		}
	}
	t, err := src.Target(ctx, obj)
	if err != nil {
		// The reads end first: they read what the caller changes next
		// (the namespaces the input applies).
		if hpaDone != nil {
			<-hpaDone
		}
		if admissionDone != nil {
			<-admissionDone
		}
		return nil, err
	}
	if sent == nil {
		sent = obj.DeepCopy()
		startReads()
	}
	gvk := obj.GroupVersionKind()
	tc, warnings, err := TypeConverter(ctx, src, obj, t.Live)
	var adm admissionResult
	if admissionDone != nil {
		adm = <-admissionDone
	}
	if err != nil {
		return nil, err
	}
	if adm.err != nil {
		return nil, fmt.Errorf("reading the cluster's admission: %w", adm.err)
	}
	warnings = append(append([]string{}, t.Notes...), warnings...)
	in := Input{
		Live:           t.Live,
		Applied:        obj,
		FieldManager:   o.FieldManager,
		Force:          o.Force,
		Subresource:    o.Subresource,
		Schema:         tc,
		CRD:            IsCustom(gvk),
		Served:         src.Served(),
		HasStatus:      t.HasStatus,
		KubectlUpgrade: o.KubectlUpgrade,
		CSAUpgrade:     o.CSAUpgrade,
		ClientSide:     o.ClientSide,

		ConversionWebhook: t.ConversionWebhook,
		ServerMinor:       t.ServerMinor,
		KeepsEmptiedMaps:  t.KeepsEmptiedMaps,
	}
	if o.Subresource == string(v1alpha1.SubresourceScale) {
		if in.ScaleSchema, err = src.ScaleSchema(ctx, gvk); err != nil {
			return nil, err
		}
	}
	simulate := func(in Input) (*Simulation, error) {
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
		r.Warnings = append(r.Warnings, warnings...)
		if err := bodyChecks(r, in, rewritten); err != nil {
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
		r.Schema = tc
		r.Defaults, _ = defaultsFor(in, r.Result.GroupVersionKind())
		r.Storage = t.Storage
		if adm.config != nil && r.Message == "" {
			req := adm.req
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
			if s, ok := tc.(*Schema); ok {
				if types, ref, ok := s.TypeOf(r.Result.GroupVersionKind()); ok && ref.NamedType != nil {
					req.Schema, req.TypeName = types, *ref.NamedType
				}
			}
			r.Admission = admission.Evaluate(adm.config, req)
			if r.Admission.Denied != "" {
				// What the apiserver would answer.
				r.Message = r.Admission.Denied
			} else if r.Admission.Mutated() {
				r.Unchecked = append(r.Unchecked, duplicateKeys(r.Admission, req.Defaulted(), tc)...)
			}
		}
		return r, nil
	}
	if r, err = simulate(in); err != nil {
		return nil, err
	}
	r.Applied = sent
	if admissionDone == nil {
		r.Warnings = append(r.Warnings, "admission (policies, webhooks, built-in plugins) is not evaluated without a cluster: check against one with kubectl ssa explain-conflict --verify")
	}
	if (o.AlsoForced || adm.config != nil && admissionActs(adm.config, adm.req, sent, t.Live)) && !o.Force && len(r.Conflicts) > 0 {
		// The forced apply is what a user who takes the fields sends:
		// admission sees it.
		forced := in
		forced.Force = true
		if r.Forced, err = simulate(forced); err != nil {
			return nil, err
		}
		r.ForcedAdmission = r.Forced.Admission
	}
	hpas := <-hpaDone
	noteAutoscalers(r, sent, t.Live, hpas.list, hpas.warning, o.InputAutoscalers)
	if o.Verify {
		dr, ok := src.(DryRunner)
		if !ok {
			return nil, fmt.Errorf("--verify needs a cluster")
		}
		if why := t.Unverifiable + o.Unverifiable; why != "" {
			r.Verify = &v1alpha1.Verification{Status: v1alpha1.VerifyNotRun, Compared: comparedApply, Differences: []string{}, ServerWarnings: []string{}, Reason: why}
			return r, nil
		}
		// A writer between the read and the dry run (a controller's
		// status update) makes the server answer for another object:
		// read again, predict again and compare again, a few times.
		for attempt := 1; ; attempt++ {
			v, rv, err := verify(ctx, dr, sent, r, o)
			if err != nil {
				return nil, err
			}
			r.Verify = v
			if v.Agrees || rv == "" || r.Live == nil || rv == r.Live.GetResourceVersion() || attempt == verifyAttempts {
				break
			}
			again := o
			again.Verify = false
			if r, err = Explain(ctx, src, manifest, again); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// bodyChecks says what the server's reading of the apply body rewrote,
// and refuses a result over the server's size limits.
func bodyChecks(r *Simulation, in Input, rewritten bool) error {
	if rewritten {
		r.Warnings = append(r.Warnings, rewrittenWarning)
	}
	if r.Message == "" && in.Subresource == "" {
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
