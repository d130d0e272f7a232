package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// applyInput is the apply that explain-conflict and diff predict, the
// same for both: the manifests (-f, -k, or a Helm release), the field
// manager, force, the subresource, --local's saved objects, and how the
// report is printed. Each command is flags -> complete -> validate ->
// run: complete takes what the flags given imply (Helm's defaults, the
// connection flags the suggested commands repeat), validate checks the
// flags (the printer is chosen there, once), and the run reads the input
// and the cluster (prepare) before it predicts each apply (predict).
type applyInput struct {
	*globalOptions
	files        resource.FilenameOptions
	fieldManager string
	force        bool
	subresource  string
	local        bool
	liveFiles    []string
	schemaFiles  []string
	output       outputFlag
	time         timeFlag
	showSecrets  bool
	upgrade      bool
	forRaw       string
	tool         remedy.Tool
	clusterFlags []string
	helm         helmInput
	csaUpgrade   []string
	// unverifiable says why --verify can't dry-run the prediction ("":
	// it can).
	unverifiable string
	// read are the manifests the run read (prepare), which the review
	// formats point at.
	read []kube.Manifest
	// snapshot is --snapshot's.
	snapshot snapshotInput
	// kc is the run's cluster (kubeCluster).
	kc *kube.Cluster
	// view is the text views' options: the run sets them (the palette
	// prepare makes, the time) before it prints.
	view render.Options
}

func newApplyInput(g *globalOptions) applyInput {
	return applyInput{globalOptions: g, fieldManager: "kubectl"}
}

// complete takes what the flags given imply: Helm's defaults, and the
// connection flags the suggested commands repeat.
func (o *applyInput) complete(cmd *cobra.Command) {
	o.helm.bind(cmd, o)
	o.clusterFlags = clusterFlags(cmd)
}

// inputAutoscalers are the HorizontalPodAutoscalers among the manifests.
func inputAutoscalers(ms []kube.Manifest) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, m := range ms {
		if gvk := m.Object.GroupVersionKind(); gvk.Group == "autoscaling" && gvk.Kind == "HorizontalPodAutoscaler" {
			out = append(out, *m.Object)
		}
	}
	return out
}

// target is what makes the suggested commands about r pasteable: the
// object, the connection and input flags, the field manager.
func (o *applyInput) target(source string, r *v1alpha1.ConflictReport) remedy.Target {
	return remedy.Target{File: source, Kustomize: o.files.Kustomize, ClusterFlags: o.clusterFlags,
		ResourceArg: r.Object.ResourceArg(), Namespace: r.Object.Namespace, MixedNamespaces: o.mixedNamespaces(source, r.Object.Namespace), FieldManager: o.fieldManager, Subresource: o.subresource, Tool: o.tool,
		HelmRelease: o.helm.release, HelmRevision: o.helm.revision, HelmInstall: o.helm.read != nil && o.helm.read.Version == 0,
		HelmServerSide: map[bool]string{true: o.helm.serverSide}[o.helm.serverSide != helmSideAuto]}
}

// mixedNamespaces tells whether an object of the input source (all of
// it for -k, standard input or a Helm release) is in a namespace other
// than ns: kubectl apply -n ns would refuse it, or move one the manifest
// leaves to the context's. An explicit -n holds for every object; without
// the cluster's discovery, an object that names no namespace counts as
// one in another.
func (o *applyInput) mixedNamespaces(source, ns string) bool {
	if o.kc != nil && o.kc.Enforce {
		return false
	}
	whole := o.files.Kustomize != "" || o.helm.release != "" || source == "" || source == "STDIN"
	for _, m := range o.read {
		if !whole && m.Source != source {
			continue
		}
		// The namespace kubectl puts, on a copy of the kind and namespace.
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(m.Object.GroupVersionKind())
		got.SetNamespace(m.Object.GetNamespace())
		if o.kc != nil && o.kc.Resolved(got) != nil && got.GetNamespace() == "" {
			continue // cluster-scoped: kubectl ignores -n
		}
		if got.GetNamespace() != ns {
			return true
		}
	}
	return false
}

// toolNames are --for's values.
func toolNames() []string {
	out := make([]string, len(remedy.Tools))
	for i, t := range remedy.Tools {
		out[i] = string(t)
	}
	return out
}

// addFlags declares the flags of the apply to predict; verb is what the
// command does with the manifests (in the help), force and forUsage the
// help of --force-conflicts and --for.
func (o *applyInput) addFlags(cmd *cobra.Command, verb, force, forUsage string) {
	f := cmd.Flags()
	f.StringSliceVarP(&o.files.Filenames, "filename", "f", nil, "Manifests to "+verb+": files, directories or URLs (- for standard input).")
	f.BoolVarP(&o.files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	f.StringVarP(&o.files.Kustomize, "kustomize", "k", "", "A kustomization directory to build and "+verb+".")
	f.StringVar(&o.fieldManager, "field-manager", o.fieldManager, "The field manager of the apply, as kubectl apply --server-side --field-manager (with --helm-release: helm).")
	f.BoolVar(&o.force, "force-conflicts", false, force)
	f.StringVar(&o.subresource, "subresource", "", "Predict an apply to a subresource: status or scale. The manifest is the object's own kind; for scale, with the .spec.replicas a controller applies to /scale (kubectl apply itself can't apply to /scale).")
	f.BoolVar(&o.local, "local", false, "Do not contact a cluster: predict against --live-file objects with the built-in schema.")
	f.StringSliceVar(&o.liveFiles, "live-file", nil, "With --local: files with the live objects, with their managedFields.")
	f.StringSliceVar(&o.schemaFiles, "schema", nil, "With --local: CustomResourceDefinition files typing custom resources.")
	o.output.add(cmd, "text", append([]string{"text", viewHTML}, reviewFormats...)...)
	o.time.add(cmd, "How to show when managers last wrote: relative, absolute or none.")
	f.BoolVar(&o.showSecrets, "show-secret-values", false, "Show the values of Secret data instead of redacting them.")
	f.StringVar(&o.forRaw, "for", "", forUsage)
	_ = cmd.RegisterFlagCompletionFunc("for", cobra.FixedCompletions(toolNames(), cobra.ShellCompDirectiveNoFileComp))
	f.BoolVar(&o.upgrade, "kubectl-upgrade", true, "Model kubectl's first step on objects still carrying client-side apply: it moves that ownership to --field-manager before applying. Set to false to predict a plain API apply (Argo CD, Flux, client-go; the default with --helm-release).")
	o.helm.addFlags(cmd, o)
	o.snapshot.addFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("subresource", cobra.FixedCompletions([]string{"status", "scale"}, cobra.ShellCompDirectiveNoFileComp))
}

// validate checks the flags of the apply; verb is what the command does
// with the manifests, verify whether explain-conflict's --verify is given.
func (o *applyInput) validate(verb string, verify bool) error {
	if err := o.helm.validate(o, verify); err != nil {
		return err
	}
	if len(o.files.Filenames) == 0 && o.files.Kustomize == "" && o.helm.release == "" {
		return fmt.Errorf("give the manifests to %s with -f or -k, or a Helm release with --helm-release", verb)
	}
	if len(o.files.Filenames) > 0 && o.files.Kustomize != "" {
		return errors.New("only one of -f and -k can be given")
	}
	if err := o.output.parse(); err != nil {
		return err
	}
	if err := ownership.ValidateManager(o.fieldManager); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	switch o.subresource {
	case "", "status", "scale":
	default:
		return fmt.Errorf("--subresource must be status or scale, not %q", o.subresource)
	}
	if err := o.time.parse(); err != nil {
		return err
	}
	if o.forRaw != "" {
		t, err := remedy.ParseTool(o.forRaw)
		if err != nil {
			return err
		}
		o.tool = t
	}
	if err := o.snapshot.validate(o); err != nil {
		return err
	}
	if o.local && verify {
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

// eachApply predicts the apply of every manifest in order, as kubectl
// apply applies them: one predicts one and returns what its apply leaves
// (nil when it fails, a conflict or a denial) and keep, which takes its
// report once the source knows what the apply leaves. An object that
// can't be predicted is an error at the end (failed): kubectl apply goes
// on after a bad object. verb names the command in the message of a
// Ctrl-C.
func (p *prepared) eachApply(ctx context.Context, verb string, one func(kube.Manifest) (*unstructured.Unstructured, func(), error)) (failed []error, err error) {
	for i, m := range p.manifests {
		result, keep, err := one(m)
		if stop := stopped(ctx, verb+" stopped at %s, object %d of %d: nothing is reported (it only reads: run it again)", kube.ObjectName(m.Object), i+1, len(p.manifests)); stop != nil {
			return nil, stop
		}
		p.src.noteApplied(m.Object, result)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		keep()
	}
	return failed, nil
}
