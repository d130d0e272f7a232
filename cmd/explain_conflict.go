package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
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
	output       outputFlag
	time         timeFlag
	showSecrets  bool
	upgrade      bool
	clusterFlags []string
}

func newExplainConflictCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{globalOptions: g, fieldManager: "kubectl"}
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
conflict, 2 an error; with --verify, 3 when the prediction differs from the
server's dry run and 4 when the server refused the dry run (no patch
permission), so that nothing was verified.`,
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
		Args: manifestArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			o.clusterFlags = clusterFlags(cmd)
			return o.run(cmd.Context())
		},
	}
	o.addApplyFlags(cmd, "simulate", "Simulate a forced apply and show who loses which fields.")
	cmd.Flags().BoolVar(&o.verify, "verify", false, "Also send the apply to the server as a dry run (dryRun=All) and report any difference from the prediction.")
	return cmd
}

// addApplyFlags declares the flags of an apply to predict, shared by
// explain-conflict and diff: what says what ("simulate", "diff").
func (o *explainOptions) addApplyFlags(cmd *cobra.Command, what, force string) {
	f := cmd.Flags()
	f.StringSliceVarP(&o.files.Filenames, "filename", "f", nil, "Manifests to "+what+": files, directories or URLs (- for standard input).")
	f.BoolVarP(&o.files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	f.StringVarP(&o.files.Kustomize, "kustomize", "k", "", "A kustomization directory to build and "+what+".")
	f.StringVar(&o.fieldManager, "field-manager", o.fieldManager, "The field manager of the apply, as kubectl apply --server-side --field-manager.")
	f.BoolVar(&o.force, "force-conflicts", false, force)
	f.StringVar(&o.subresource, "subresource", "", "Predict an apply to a subresource: status or scale.")
	f.BoolVar(&o.local, "local", false, "Do not contact a cluster: predict against --live-file objects with the built-in schema.")
	f.StringSliceVar(&o.liveFiles, "live-file", nil, "With --local: files with the live objects, with their managedFields.")
	f.StringSliceVar(&o.schemaFiles, "schema", nil, "With --local: CustomResourceDefinition files typing custom resources.")
	o.output.add(cmd, "text", "text")
	o.time.add(cmd, "How to show when managers last wrote: relative, absolute or none.")
	f.BoolVar(&o.showSecrets, "show-secret-values", false, "Show the values of Secret data instead of redacting them.")
	f.BoolVar(&o.upgrade, "kubectl-upgrade", true, "Model kubectl's first step on objects still carrying client-side apply: it moves that ownership to --field-manager before applying. Set to false to predict a plain API apply (Argo CD, Flux, client-go).")
	_ = cmd.RegisterFlagCompletionFunc("subresource", cobra.FixedCompletions([]string{"status", "scale"}, cobra.ShellCompDirectiveNoFileComp))
}

func (o *explainOptions) validate() error {
	if len(o.files.Filenames) == 0 && o.files.Kustomize == "" {
		return errors.New("give the manifests to simulate with -f or -k")
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
	if _, err := o.time.parse(); err != nil {
		return err
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

func (o *explainOptions) run(ctx context.Context) error {
	pal, err := o.palette()
	if err != nil {
		return err
	}
	manifests, err := kube.ReadManifests(ctx, o.streams.In, &o.files)
	if err != nil {
		return err
	}
	src, err := o.source(ctx)
	if err != nil {
		return err
	}
	opts := conflict.Options{FieldManager: o.fieldManager, Force: o.force, Subresource: o.subresource, KubectlUpgrade: o.upgrade, Verify: o.verify}
	// Every object that can be simulated is explained; the others are
	// errors at the end, as kubectl apply goes on after a bad object.
	var reports []*conflict.Report
	var sources []string
	var failed []error
	for _, m := range manifests {
		r, err := conflict.Explain(ctx, src, m.Object, opts)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if !o.showSecrets {
			r.RedactSecrets()
		}
		r.Resolutions = conflict.Resolutions(r, o.target(m.Source, r))
		reports = append(reports, r)
		sources = append(sources, m.Source)
	}

	if len(reports) > 0 && o.output.out.IsData() {
		items := make([]interface{}, len(reports))
		for i, r := range reports {
			items[i] = r
		}
		if err := o.output.out.Print(o.streams.Out, items, len(manifests) > 1); err != nil {
			return err
		}
	} else if len(reports) > 0 {
		tm, _ := o.time.parse()
		ropts := render.Options{Time: tm, Now: time.Now(), Palette: pal}
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(o.streams.Out)
			}
			render.ConflictExplanation(o.streams.Out, r, ropts, o.target(sources[i], r))
		}
	}
	return exitCode(o.streams.ErrOut, reports, failed)
}

// target is what makes the suggested commands about r pasteable: the
// object, the connection and input flags, the field manager.
func (o *explainOptions) target(source string, r *conflict.Report) remedy.Target {
	return remedy.Target{File: source, Kustomize: o.files.Kustomize, ClusterFlags: o.clusterFlags,
		ResourceArg: r.Object.ResourceArg(), Namespace: r.Object.Namespace, FieldManager: o.fieldManager, Subresource: o.subresource}
}

// exitCode says how the run ends: errors first, then what --verify found,
// then conflicts.
func exitCode(errOut io.Writer, reports []*conflict.Report, failed []error) error {
	if len(failed) > 0 {
		for _, e := range failed[:len(failed)-1] {
			render.Error(errOut, e)
		}
		return failed[len(failed)-1]
	}
	refused := 0
	for _, r := range reports {
		switch {
		case r.Verify == nil:
		case r.Verify.Status == conflict.VerifyDiffers:
			return &ExitError{Code: CodeVerifyDiffers, Err: errors.New("the local prediction differs from the server's dry run (see the report): please report this as a kubectl-ssa bug")}
		case r.Verify.Status == conflict.VerifyRefused:
			refused++
		}
	}
	if refused > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("--verify: the server refused the dry run of %d of %d object(s) (it needs patch permission): the prediction stands unverified", refused, len(reports))}
	}
	for _, r := range reports {
		if r.Message != "" {
			return exit(CodeFound)
		}
	}
	return nil
}

// source is the cluster, or with --local the saved files.
func (o *explainOptions) source(ctx context.Context) (conflict.Source, error) {
	if !o.local {
		c, err := o.cluster()
		if err != nil {
			return nil, err
		}
		if err := c.CheckServer(); err != nil {
			return nil, err
		}
		return source.NewCluster(c, o.cacheDir()), nil
	}
	lives, err := kube.ReadManifests(ctx, o.streams.In, &resource.FilenameOptions{Filenames: o.liveFiles})
	if err != nil {
		return nil, fmt.Errorf("--live-file: %w", err)
	}
	crds, err := readCRDs(ctx, o.schemaFiles)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, len(lives))
	for i, l := range lives {
		objs[i] = l.Object
	}
	src, err := conflict.NewOfflineSource(objs, crds)
	if err != nil {
		return nil, fmt.Errorf("--schema: %w", err)
	}
	return src, nil
}

// resourceArg names the object for kubectl and kubectl-ssa, fully
// qualified with its version (kind.version.group/name), so that a kind
// served at several versions resolves to the one of the report.
