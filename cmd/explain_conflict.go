package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type explainOptions struct {
	*globalOptions
	files        resource.FilenameOptions
	fieldManager string
	force        bool
	subresource  string
	local        bool
	liveFiles    []string
	schemaFiles  []string
	verify       bool
	output       string
	timeMode     string
	showSecrets  bool
	upgrade      bool
}

func newExplainConflictCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{globalOptions: g, fieldManager: "kubectl", output: "text", timeMode: "relative"}
	cmd := &cobra.Command{
		Use:   "explain-conflict -f MANIFEST [flags]",
		Short: "Predict a server-side apply locally and explain its conflicts",
		Long: `Simulate "kubectl apply --server-side" of the manifests locally, with the
apiserver's own field-manager code and the cluster's OpenAPI schema, and
explain the result: every conflict (who owns the field, since when, the value
they hold against yours, what that manager most likely is, and the commands
that resolve it), the fields the apply would remove, and the fields it would
NOT remove because another manager still owns them.

Nothing is written and no patch permission is needed: the live objects and
the schema are read, the apply is computed here. --verify also sends the same
apply to the server as a dry run (which needs patch permission and runs
admission webhooks) and reports any difference.

Without a cluster, --local --live-file LIVE.yaml simulates against saved
objects (kubectl get -o yaml --show-managed-fields) with the built-in schema
compiled into kubectl-ssa; custom resources then need --schema CRD.yaml, or
are typed by deduction (all lists atomic), which the report says.

Exit status, as kubectl diff: 0 the apply would succeed, 1 it would
conflict, 2 an error; 3 when --verify found the prediction differs from the
server's dry run.`,
		Example: `  # Would this apply conflict, and with whom?
  kubectl ssa explain-conflict -f deploy.yaml

  # As another field manager, e.g. a CI pipeline's
  kubectl ssa explain-conflict -f manifests/ -R --field-manager ci-deploy

  # What a forced apply would take from whom
  kubectl ssa explain-conflict -f deploy.yaml --force-conflicts

  # Gate a CI pipeline on conflicts, with a machine-readable report
  kubectl ssa explain-conflict -k overlays/prod -o json > report.json || echo "conflicts"

  # Check the prediction against the server's own dry run
  kubectl ssa explain-conflict -f deploy.yaml --verify

  # Offline, against a saved object
  kubectl get deploy web -o yaml --show-managed-fields > live.yaml
  kubectl ssa explain-conflict --local --live-file live.yaml -f deploy.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files.Filenames, "filename", "f", nil, "Manifests to simulate: files, directories or URLs (- for standard input).")
	f.BoolVarP(&o.files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	f.StringVarP(&o.files.Kustomize, "kustomize", "k", "", "A kustomization directory to build and simulate.")
	f.StringVar(&o.fieldManager, "field-manager", o.fieldManager, "The field manager of the apply, as kubectl apply --server-side --field-manager.")
	f.BoolVar(&o.force, "force-conflicts", false, "Simulate a forced apply and show who loses which fields.")
	f.StringVar(&o.subresource, "subresource", "", "Simulate an apply to a subresource: status or scale.")
	f.BoolVar(&o.local, "local", false, "Do not contact a cluster: simulate against --live-file objects with the built-in schema.")
	f.StringSliceVar(&o.liveFiles, "live-file", nil, "With --local: files with the live objects, with their managedFields.")
	f.StringSliceVar(&o.schemaFiles, "schema", nil, "With --local: CustomResourceDefinition files typing custom resources.")
	f.BoolVar(&o.verify, "verify", false, "Also send the apply to the server as a dry run (dryRun=All) and report any difference from the prediction.")
	f.StringVarP(&o.output, "output", "o", o.output, "Output: text, json or yaml.")
	f.StringVar(&o.timeMode, "time", o.timeMode, "How to show when managers last wrote: relative, absolute or none.")
	f.BoolVar(&o.showSecrets, "show-secret-values", false, "Show the live and applied values of Secret data instead of redacting them.")
	f.BoolVar(&o.upgrade, "kubectl-upgrade", true, "Model kubectl's first step on objects still carrying client-side apply: it moves that ownership to --field-manager before applying. Set to false to predict a plain API apply (Argo CD, Flux, client-go).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("subresource", cobra.FixedCompletions([]string{"status", "scale"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *explainOptions) validate() error {
	if len(o.files.Filenames) == 0 && o.files.Kustomize == "" {
		return errors.New("give the manifests to simulate with -f or -k")
	}
	if len(o.files.Filenames) > 0 && o.files.Kustomize != "" {
		return errors.New("only one of -f and -k can be given")
	}
	switch o.output {
	case "text", "json", "yaml":
	default:
		return fmt.Errorf("--output must be text, json or yaml, not %q", o.output)
	}
	if err := ownership.ValidateManager(o.fieldManager); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	switch o.subresource {
	case "", "status", "scale":
	default:
		return fmt.Errorf("--subresource must be status or scale, not %q", o.subresource)
	}
	switch render.TimeMode(o.timeMode) {
	case render.TimeRelative, render.TimeAbsolute, render.TimeNone:
	default:
		return fmt.Errorf("--time must be relative, absolute or none, not %q", o.timeMode)
	}
	if o.fieldManager == "" {
		return errors.New("--field-manager must not be empty")
	}
	if o.local && o.verify {
		return errors.New("--verify asks the server, --local never does: give one of them")
	}
	if !o.local && (len(o.liveFiles) > 0 || len(o.schemaFiles) > 0) {
		return errors.New("--live-file and --schema go with --local")
	}
	if o.local && len(o.liveFiles) == 0 {
		return errors.New("--local needs the saved live objects in --live-file (an object missing from them is simulated as a create)")
	}
	return nil
}

// manifest is one object to apply and the file it came from.
type manifest struct {
	obj    *unstructured.Unstructured
	source string
}

func readObjects(files *resource.FilenameOptions) ([]manifest, error) {
	r := resource.NewLocalBuilder().Unstructured().Local().FilenameParam(false, files).Flatten().ContinueOnError().Do()
	if err := r.Err(); err != nil {
		return nil, friendly(err)
	}
	infos, err := r.Infos()
	if err != nil {
		return nil, friendly(err)
	}
	out := make([]manifest, 0, len(infos))
	for _, i := range infos {
		u, ok := i.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("%s: unexpected object type %T", i.Source, i.Object)
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: an object without apiVersion or kind: fix the manifest", i.Source)
		}
		out = append(out, manifest{obj: u, source: i.Source})
	}
	if len(out) == 0 {
		return nil, errors.New("the manifests hold no objects")
	}
	return out, nil
}

func (o *explainOptions) run(ctx context.Context) error {
	pal, err := o.palette()
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	manifests, err := readObjects(&o.files)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	var all []*conflict.Report
	var errs []error
	if o.local {
		all, errs, err = o.simulateLocal(manifests)
	} else {
		all, errs, err = o.simulateCluster(ctx, manifests)
	}
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	// Every object that could be simulated is explained; the others are
	// errors at the end, as kubectl apply goes on after a bad object.
	var reports []*conflict.Report
	var sources []string
	var failed []error
	for i, r := range all {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		if !o.showSecrets {
			r.RedactSecrets()
		}
		reports = append(reports, r)
		sources = append(sources, manifests[i].source)
	}

	if len(reports) > 0 && render.IsData(o.output) {
		items := make([]interface{}, len(reports))
		for i, r := range reports {
			items[i] = r
		}
		if err := render.Data(o.streams.Out, o.output, items, len(manifests) > 1); err != nil {
			return err
		}
	} else if len(reports) > 0 {
		ropts := render.Options{Time: render.TimeMode(o.timeMode), Now: time.Now(), Palette: pal}
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(o.streams.Out)
			}
			render.ConflictExplanation(o.streams.Out, r, ropts, render.ConflictContext{
				Source:       sources[i],
				ResourceArg:  resourceArg(r),
				Namespace:    r.Object.Namespace,
				FieldManager: o.fieldManager,
				Subresource:  o.subresource,
			})
		}
	}
	if len(failed) > 0 {
		for _, e := range failed[:len(failed)-1] {
			render.Error(o.streams.ErrOut, e)
		}
		return &ExitError{Code: 2, Err: failed[len(failed)-1]}
	}
	for _, r := range reports {
		if r.Verify != nil && !r.Verify.Agrees {
			return &ExitError{Code: 3, Err: errors.New("the local prediction differs from the server's dry run (see the report): please report this as a kubectl-ssa bug")}
		}
	}
	for _, r := range reports {
		if r.Message != "" {
			return &ExitError{Code: 1}
		}
	}
	return nil
}

func resourceArg(r *conflict.Report) string {
	gv, _ := schema.ParseGroupVersion(r.Object.APIVersion)
	k := lower(r.Object.Kind)
	if gv.Group != "" {
		k += "." + gv.Group
	}
	return k + "/" + r.Object.Name
}

func (o *explainOptions) simulateCluster(ctx context.Context, manifests []manifest) ([]*conflict.Report, []error, error) {
	c, err := newCluster(o.globalOptions)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.servedVersions(); err != nil {
		return nil, nil, err
	}
	one := func(m manifest) (*conflict.Report, error) {
		obj := m.obj.DeepCopy()
		live, mapping, err := c.live(ctx, obj)
		if err != nil {
			return nil, err
		}
		gvk := obj.GroupVersionKind()
		var warnings []string
		sch, err := c.schemaFor(ctx, obj, live)
		var tc managedfields.TypeConverter = sch
		if err != nil || !sch.Has(gvk) {
			why := "it does not publish one"
			if err != nil {
				why = err.Error()
			}
			if conflict.IsBuiltin(gvk) {
				tc = conflict.BuiltinSchema()
				warnings = append(warnings, fmt.Sprintf("the cluster's OpenAPI schema for %s could not be used (%s): used the schema compiled into kubectl-ssa instead", gvk.GroupVersion(), why))
			} else {
				tc = managedfields.NewDeducedTypeConverter()
				warnings = append(warnings, fmt.Sprintf("no schema for %s (%s): typed by deduction, every list atomic", gvk, why))
			}
		}
		in := conflict.Input{
			Live:           live,
			Applied:        obj,
			FieldManager:   o.fieldManager,
			Force:          o.force,
			Subresource:    o.subresource,
			Schema:         tc,
			CRD:            isCustom(gvk),
			Served:         c.servedKind,
			HasStatus:      c.hasSubresource(mapping, "status"),
			KubectlUpgrade: o.upgrade,
		}
		if o.subresource == "scale" {
			// The Scale type comes with the parent's group-version document.
			if in.ScaleSchema, err = c.loader.Load(ctx, []schema.GroupVersion{gvk.GroupVersion(), {Group: "autoscaling", Version: "v1"}}); err != nil {
				return nil, err
			}
		}
		r, err := simulate(in)
		if err != nil {
			return nil, err
		}
		r.Warnings = append(r.Warnings, warnings...)
		if o.verify {
			ri, _, err := c.resource(obj)
			if err != nil {
				return nil, err
			}
			// The server's dry run sees one apply: kubectl's first.
			against := r
			if r.FirstApply != nil {
				against = r.FirstApply
			}
			r.Verify, err = verify(ctx, ri, obj, against, o.fieldManager, o.force, o.subresource)
			if err != nil {
				return nil, err
			}
			if r.FirstApply != nil {
				r.Warnings = append(r.Warnings, "--verify compared kubectl's first apply: the server can't dry-run the steps kubectl sends after it")
			}
		}
		return r, nil
	}
	reports, errs := each(manifests, one)
	return reports, errs, nil
}

// each runs one per manifest, keeping every result and error in order.
func each(manifests []manifest, one func(manifest) (*conflict.Report, error)) ([]*conflict.Report, []error) {
	reports := make([]*conflict.Report, len(manifests))
	errs := make([]error, len(manifests))
	for i, m := range manifests {
		reports[i], errs[i] = one(m)
	}
	return reports, errs
}

// simulate runs the simulation, routing scale-subresource applies through
// the scale handler's view of .spec.replicas.
func simulate(in conflict.Input) (*conflict.Report, error) {
	if in.Subresource == "scale" {
		return conflict.SimulateScale(in)
	}
	return conflict.Simulate(in)
}

func (o *explainOptions) simulateLocal(manifests []manifest) ([]*conflict.Report, []error, error) {
	lives, err := readObjects(&resource.FilenameOptions{Filenames: o.liveFiles})
	if err != nil {
		return nil, nil, fmt.Errorf("--live-file: %w", err)
	}
	schemas := map[schema.GroupKind]*conflict.Schema{}
	for _, f := range o.schemaFiles {
		crds, err := readObjects(&resource.FilenameOptions{Filenames: []string{f}})
		if err != nil {
			return nil, nil, fmt.Errorf("--schema: %w", err)
		}
		for _, c := range crds {
			s, err := conflict.CRDSchema(c.obj)
			if err != nil {
				return nil, nil, fmt.Errorf("--schema %s: %w", f, err)
			}
			group, _, _ := unstructured.NestedString(c.obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(c.obj.Object, "spec", "names", "kind")
			schemas[schema.GroupKind{Group: group, Kind: kind}] = s
		}
	}
	one := func(m manifest) (*conflict.Report, error) {
		obj := m.obj.DeepCopy()
		gvk := obj.GroupVersionKind()
		var live *unstructured.Unstructured
		for _, l := range lives {
			if l.obj.GroupVersionKind().GroupKind() == gvk.GroupKind() && l.obj.GetName() == obj.GetName() &&
				(obj.GetNamespace() == "" || l.obj.GetNamespace() == obj.GetNamespace()) {
				live = l.obj.DeepCopy()
				if obj.GetNamespace() == "" {
					obj.SetNamespace(live.GetNamespace())
				}
				break
			}
		}
		if live != nil && live.GroupVersionKind() != gvk {
			return nil, fmt.Errorf("%s: the live file has it at %s, the manifest at %s: save the live object at the manifest's apiVersion", objName(obj), live.GetAPIVersion(), obj.GetAPIVersion())
		}
		var warnings []string
		var tc managedfields.TypeConverter
		custom := !conflict.IsBuiltin(gvk)
		switch {
		case !custom:
			tc = conflict.BuiltinSchema()
		case schemas[gvk.GroupKind()] != nil:
			tc = schemas[gvk.GroupKind()]
			warnings = append(warnings, "typed by the CRD from --schema; its metadata is typed by deduction (finalizers and ownerReferences compare as atomic lists)")
		default:
			tc = managedfields.NewDeducedTypeConverter()
			warnings = append(warnings, fmt.Sprintf("no schema for custom resource %s: typed by deduction, every list atomic (give the CRD with --schema)", gvk))
		}
		hasStatus := false
		if live != nil {
			_, hasStatus, _ = unstructured.NestedFieldNoCopy(live.Object, "status")
			if len(live.GetManagedFields()) == 0 {
				warnings = append(warnings, "the live file has no managedFields (saved without --show-managed-fields?): the prediction treats the object as never applied, so before-first-apply owns everything; save it with kubectl get -o yaml --show-managed-fields")
			}
		} else {
			warnings = append(warnings, "not in --live-file: simulated as a create")
		}
		r, err := simulate(conflict.Input{
			Live: live, Applied: obj, FieldManager: o.fieldManager, Force: o.force, Subresource: o.subresource,
			Schema: tc, CRD: custom, HasStatus: hasStatus, KubectlUpgrade: o.upgrade,
		})
		if err != nil {
			return nil, err
		}
		r.Warnings = append(r.Warnings, warnings...)
		return r, nil
	}
	reports, errs := each(manifests, one)
	return reports, errs, nil
}

// verify sends the same apply as a server dry run and compares.
func verify(ctx context.Context, ri interface {
	Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error)
}, obj *unstructured.Unstructured, r *conflict.Report, manager string, force bool, sub string) (*conflict.Verification, error) {
	v := &conflict.Verification{Agrees: true, Differences: []string{}}
	diff := func(format string, args ...interface{}) {
		v.Agrees = false
		v.Differences = append(v.Differences, fmt.Sprintf(format, args...))
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	if sub == "scale" {
		// /scale takes an autoscaling/v1 Scale.
		replicas, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
		scale := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"spec": map[string]interface{}{"replicas": replicas}}}
		scale.SetName(obj.GetName())
		scale.SetNamespace(obj.GetNamespace())
		obj = scale
	}
	out, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: manager, Force: force, DryRun: []string{metav1.DryRunAll}}, subs...)
	switch {
	case apierrors.IsConflict(err):
		st := err.(apierrors.APIStatus).Status()
		if r.Message == "" {
			diff("the server reports a conflict the prediction missed: %s", st.Message)
			return v, nil
		}
		if st.Message != r.Message {
			diff("message: server %q, predicted %q", st.Message, r.Message)
		}
		var server, local []string
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				server = append(server, c.Field+" "+c.Message)
			}
		}
		for _, c := range r.Conflicts {
			local = append(local, c.Path.APIServerString())
		}
		if len(server) != len(local) {
			diff("conflicts: server %d, predicted %d", len(server), len(local))
		}
	case apierrors.IsForbidden(err):
		r.Warnings = append(r.Warnings, "--verify: the server refused the dry run (it needs patch permission): nothing was compared")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("--verify: the server dry run failed: %w", err)
	default:
		if r.Message != "" {
			diff("the prediction has conflicts, the server applied: %s", r.Message)
			return v, nil
		}
		if sub == "scale" {
			// The server answers with a Scale, which carries no
			// managedFields of the parent to compare.
			return v, nil
		}
		got, want := normalizeManaged(out.GetManagedFields()), normalizeManaged(r.ManagedFields)
		if !reflect.DeepEqual(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			diff("managedFields: server %s, predicted %s", gb, wb)
		}
	}
	return v, nil
}

// normalizeManaged drops times (each side stamps its own) and orders
// entries so that two predictions compare.
func normalizeManaged(in []metav1.ManagedFieldsEntry) []map[string]interface{} {
	out := []map[string]interface{}{}
	for _, e := range in {
		fields := map[string]interface{}{}
		if e.FieldsV1 != nil {
			_ = json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields)
		}
		out = append(out, map[string]interface{}{
			"manager": e.Manager, "operation": string(e.Operation), "subresource": e.Subresource,
			"apiVersion": e.APIVersion, "fields": fields,
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return fmt.Sprint(out[i]["manager"], out[i]["operation"], out[i]["subresource"]) < fmt.Sprint(out[j]["manager"], out[j]["operation"], out[j]["subresource"])
	})
	return out
}
