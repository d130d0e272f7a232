package celeval

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	ssaadmission "github.com/kubectl-ssa/kubectl-ssa/pkg/admission"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/schemacodec"
)

// compileMutating compiles a policy as the apiserver's mutating plugin
// does (its compilePolicy, which is not exported).
func (e *evaluation) compileMutating(policy *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := plugincel.OptionalVariableDeclarations{HasParams: policy.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(e.envSet())
	if err != nil {
		return mutating.PolicyEvaluator{Error: err}
	}
	matcher := variablesAndConditions(compiler, policy.Spec.Variables, policy.Spec.MatchConditions, opts, policy.Spec.FailurePolicy, policy.Name)
	var patchers []patch.Patcher
	patchOptions := opts
	patchOptions.HasPatchTypes = true
	for _, m := range policy.Spec.Mutations {
		switch m.PatchType {
		case admissionregistrationv1.PatchTypeJSONPatch:
			if m.JSONPatch != nil {
				r := compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOptions, environment.StoredExpressions)
				patchers = append(patchers, patch.NewJSONPatcher(r))
			}
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration != nil {
				r := compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOptions, environment.StoredExpressions)
				patchers = append(patchers, patch.NewApplyConfigurationPatcher(r))
			}
		}
	}
	return mutating.PolicyEvaluator{Matcher: matcher, Mutators: patchers, CompositedCompiler: compiler}
}

// staticTypes is the type converter of the request's schema.
type staticTypes struct {
	parser *typed.Parser
	gvk    schema.GroupVersionKind
	name   string
}

func (s *staticTypes) GetTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	if s == nil || gvk != s.gvk {
		return nil
	}
	return s
}

func (s *staticTypes) Run(context.Context) {}

func (s *staticTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return s.parser.Type(s.name).FromUnstructured(u, opts...)
}

func (s *staticTypes) TypedToObject(value *typed.TypedValue) (runtime.Object, error) {
	m, ok := value.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a typed value of %T is not an object", value.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// types is the type converter of the request's schema.
func (e *evaluation) types() (patch.TypeConverterManager, error) {
	s, err := schemacodec.Decode(e.req.Schema)
	if err != nil {
		return nil, fmt.Errorf("decoding the schema: %w", err)
	}
	parser := &typed.Parser{}
	parser.Schema.Types = s.Types
	return &staticTypes{parser: parser, gvk: e.gvk, name: e.req.TypeName}, nil
}

// mutate runs the mutating policies on obj as the admission chain does:
// once, and once more when a policy changed the object and a policy
// asks to be reinvoked (IfNeeded). It returns the mutated object (nil:
// unchanged).
func (e *evaluation) mutate(ctx context.Context, obj *unstructured.Unstructured, res *ssaadmission.PolicyResult) (*unstructured.Unstructured, error) {
	hooks, err := e.mutatingHooks(res)
	if err != nil {
		return nil, err
	}
	if len(hooks) == 0 {
		return nil, nil
	}
	if len(e.req.Schema) == 0 || e.req.TypeName == "" {
		// The dispatcher types every mutation's result.
		for _, h := range hooks {
			res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("MutatingAdmissionPolicy %s: the schema of %s is not known here", h.Policy.Name, e.gvk.Kind))
		}
		return nil, nil
	}
	types, err := e.types()
	if err != nil {
		return nil, err
	}
	first, err := e.run(ctx, obj, hooks, types)
	if err != nil {
		return nil, err
	}
	if first.authz {
		e.askingAuthorizer(ctx, obj, hooks, types, res)
		return nil, nil
	}
	// The server runs the policies in the order of a Go map (its policy
	// source's): a result that depends on the order is not known.
	if why, err := e.orderMatters(ctx, obj, hooks, types, first); err != nil {
		return nil, err
	} else if why != "" {
		for _, h := range hooks {
			res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("MutatingAdmissionPolicy %s: %s", h.Policy.Name, why))
		}
		return nil, nil
	}
	res.Warnings = append(res.Warnings, first.warnings...)
	if first.denied != "" {
		res.Denied, res.Code, res.DeniedInMutation = first.denied, first.code, true
		// Which binding refuses: alone, each says.
		res.Bindings = append(res.Bindings, e.attribute(ctx, obj, hooks, types)...)
		return nil, nil
	}
	out := first.object
	if out == nil || reflect.DeepEqual(out.Object, obj.Object) {
		for _, h := range hooks {
			for _, b := range h.Bindings {
				res.Bindings = append(res.Bindings, ssaadmission.BindingResult{Kind: v1alpha1.MutatingAdmissionPolicy, Policy: h.Policy.Name, Binding: b.Name, Outcome: ssaadmission.Unchanged})
			}
		}
		return nil, nil
	}
	paths := changedPaths(obj.Object, out.Object, nil)
	sort.Slice(paths, func(i, j int) bool { return fmt.Sprint(paths[i]) < fmt.Sprint(paths[j]) })
	res.Bindings = append(res.Bindings, e.attribute(ctx, obj, hooks, types)...)
	for i := range res.Bindings {
		if res.Bindings[i].Outcome == ssaadmission.Mutated && len(res.Bindings[i].Paths) == 0 {
			res.Bindings[i].Paths = paths
		}
	}
	return out, nil
}

// mutatingHooks are the mutating policies with their bindings, defaulted
// as the apiserver defaults them, as the dispatcher takes them; a policy
// whose params or user can't be read is not evaluable (in res).
func (e *evaluation) mutatingHooks(res *ssaadmission.PolicyResult) ([]mutating.PolicyHook, error) {
	names, bindings := bindingsOf(e.req.MutatingPolicies, e.req.MutatingBindings)
	policies := byName(e.req.MutatingPolicies)
	var hooks []mutating.PolicyHook
	for _, name := range names {
		p, err := decodePolicy[admissionregistrationv1.MutatingAdmissionPolicy](policies[name])
		if err != nil {
			return nil, err
		}
		defaultMatch(p.Spec.MatchConstraints)
		defaultFailurePolicy(&p.Spec.FailurePolicy)
		if p.Spec.ReinvocationPolicy == "" {
			p.Spec.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
		}
		var bs []*admissionregistrationv1.MutatingAdmissionPolicyBinding
		for _, u := range bindings[name] {
			b, err := decodePolicy[admissionregistrationv1.MutatingAdmissionPolicyBinding](u)
			if err != nil {
				return nil, err
			}
			defaultMatch(b.Spec.MatchResources)
			bs = append(bs, b)
		}
		if len(bs) == 0 {
			continue
		}
		informer, scope, unreadable := e.paramsOf(p.Spec.ParamKind)
		if unreadable != "" {
			res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("MutatingAdmissionPolicy %s: its params could not be read: %s", p.Name, unreadable))
			continue
		}
		if e.req.UserInfo == nil && usesUser(p.Spec) {
			res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("MutatingAdmissionPolicy %s: it reads request.userInfo, and who you are could not be read (SelfSubjectReview)", p.Name))
			continue
		}
		hooks = append(hooks, mutating.PolicyHook{Policy: p, Bindings: bs, ParamInformer: informer, ParamScope: scope, Evaluator: e.compileMutating(p)})
	}
	return hooks, nil
}

// askingAuthorizer makes every hook not evaluable when one asks the
// authorizer, saying which.
func (e *evaluation) askingAuthorizer(ctx context.Context, obj *unstructured.Unstructured, hooks []mutating.PolicyHook, types patch.TypeConverterManager, res *ssaadmission.PolicyResult) {
	// Which one asks: alone, each says.
	var asking []string
	for _, h := range hooks {
		if alone, err := e.run(ctx, obj, []mutating.PolicyHook{h}, types); err == nil && alone.authz {
			asking = append(asking, h.Policy.Name)
		}
	}
	for _, h := range hooks {
		why := "it asks the authorizer, which only the server can answer"
		if !slices.Contains(asking, h.Policy.Name) {
			why = fmt.Sprintf("it runs in one chain with %s, which asks the authorizer, which only the server can answer", strings.Join(asking, ", "))
		}
		res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("MutatingAdmissionPolicy %s: %s", h.Policy.Name, why))
	}
}

// attribute says which policy binding changed the object: each runs
// alone on the request's object.
func (e *evaluation) attribute(ctx context.Context, obj *unstructured.Unstructured, hooks []mutating.PolicyHook, types patch.TypeConverterManager) []ssaadmission.BindingResult {
	var out []ssaadmission.BindingResult
	for _, h := range hooks {
		for _, b := range h.Bindings {
			one := h
			one.Bindings = []*admissionregistrationv1.MutatingAdmissionPolicyBinding{b}
			attrs := e.attributes(obj.DeepCopy())
			d := mutating.NewDispatcher(&unknowable{}, e.matcher, types)
			if ok, _, _, err := generic.NewPolicyMatcher(e.matcher).DefinitionMatches(attrs, e.objects, mutating.NewMutatingAdmissionPolicyAccessor(h.Policy)); err == nil && !ok {
				continue
			}
			if ok, err := generic.NewPolicyMatcher(e.matcher).BindingMatches(attrs, e.objects, mutating.NewMutatingAdmissionPolicyBindingAccessor(b)); err == nil && !ok {
				continue
			}
			br := ssaadmission.BindingResult{Kind: v1alpha1.MutatingAdmissionPolicy, Policy: h.Policy.Name, Binding: b.Name, Outcome: ssaadmission.Unchanged}
			if err := d.Dispatch(ctx, attrs, e.objects, []mutating.PolicyHook{one}); err != nil {
				msg, _ := statusOf(err)
				br.Outcome, br.Messages = ssaadmission.Denied, []string{msg}
			} else if after, ok := attrs.GetObject().(*unstructured.Unstructured); ok && !reflect.DeepEqual(after.Object, obj.Object) {
				br.Outcome, br.Paths = ssaadmission.Mutated, changedPaths(obj.Object, after.Object, nil)
			}
			out = append(out, br)
		}
	}
	return out
}

// changedPaths are the paths where after differs from before: the
// deepest map keys that differ (a list that differs is one path).
func changedPaths(before, after map[string]any, prefix []string) [][]string {
	var out [][]string
	keys := maps.Clone(before)
	maps.Copy(keys, after)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		b, a := before[k], after[k]
		if reflect.DeepEqual(a, b) {
			continue
		}
		path := append(append([]string{}, prefix...), k)
		bm, bok := b.(map[string]any)
		am, aok := a.(map[string]any)
		if aok && b == nil {
			// A new map: each of its fields is set.
			bm, bok = map[string]any{}, true
		}
		if bok && aok && len(am) > 0 {
			out = append(out, changedPaths(bm, am, path)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

// run is one pass of the mutating policies in order, with the admission
// chain's reinvocation (admission.reinvoker).
type run struct {
	object   *unstructured.Unstructured
	denied   string
	code     int32
	warnings []string
	authz    bool
}

func (e *evaluation) run(ctx context.Context, obj *unstructured.Unstructured, hooks []mutating.PolicyHook, types patch.TypeConverterManager) (*run, error) {
	authz := &unknowable{}
	w := &warnings{}
	ctx = warning.WithWarningRecorder(ctx, w)
	d := mutating.NewDispatcher(authz, e.matcher, types)
	attrs := e.attributes(obj.DeepCopy())
	err := d.Dispatch(ctx, attrs, e.objects, hooks)
	if err == nil {
		if rc := attrs.GetReinvocationContext(); rc.ShouldReinvoke() {
			rc.SetIsReinvoke()
			err = d.Dispatch(ctx, attrs, e.objects, hooks)
		}
	}
	r := &run{warnings: w.list, authz: authz.wasCalled()}
	if err != nil {
		r.denied, r.code = statusOf(err)
		return r, nil
	}
	out, ok := attrs.GetObject().(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the mutating policies left a %T", attrs.GetObject())
	}
	r.object = out
	return r, nil
}

// maxOrdered bounds the orders of mutating policies tried (5! = 120).
const maxOrdered = 5

// orderMatters runs the policies in every other order and says why the
// result is not known when one differs from first ("": it is the same).
func (e *evaluation) orderMatters(ctx context.Context, obj *unstructured.Unstructured, hooks []mutating.PolicyHook, types patch.TypeConverterManager, first *run) (string, error) {
	if len(hooks) < 2 {
		return "", nil
	}
	if len(hooks) > maxOrdered {
		return fmt.Sprintf("%d mutating policies match, and the server runs them in an order it does not fix: more than %d are not tried in every order here", len(hooks), maxOrdered), nil
	}
	var differs bool
	var walk func(order []mutating.PolicyHook, rest []mutating.PolicyHook) error
	walk = func(order, rest []mutating.PolicyHook) error {
		if differs {
			return nil
		}
		if len(rest) == 0 {
			r, err := e.run(ctx, obj, order, types)
			if err != nil {
				return err
			}
			differs = r.denied != first.denied || (r.object == nil) != (first.object == nil) || r.object != nil && !reflect.DeepEqual(r.object.Object, first.object.Object)
			return nil
		}
		for i := range rest {
			next := append(append([]mutating.PolicyHook{}, rest[:i]...), rest[i+1:]...)
			if err := walk(append(append([]mutating.PolicyHook{}, order...), rest[i]), next); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil, hooks); err != nil {
		return "", err
	}
	if differs {
		return "the matching mutating policies change the object differently in different orders, and the server runs them in an order it does not fix", nil
	}
	return "", nil
}
