package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type extractOptions struct {
	*globalOptions
	sel         kube.Selection
	selector    diff.Selector
	all         bool
	output      outputFlag
	schemaFiles []string
	showSecrets bool

	// Set by complete.
	args []string
}

func newExtractCmd(g *globalOptions) *cobra.Command {
	o := &extractOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "extract (TYPE/NAME... | TYPE -l SELECTOR | -f FILE) (--manager NAME | --all-managers) [flags]",
		Short: "Print the apply configuration a field manager owns, ready to save as a manifest",
		Long: `Rebuild what one field manager applies from an object's managedFields: the
fields it owns, with their current values, and the object's identity. It is
what client-go's Extract functions and apimachinery's
managedfields.ExtractInto compute, with the cluster's schema (the built-in
one and --schema CRDs with --local), for Update entries too.

Use it to recover a lost manifest, see what a Helm release or a controller
really applies, or start an apply configuration for a new manager. The
key fields of list items come with the fields below them (a container's
name with the image kubectl set image owns), so that the result applies.
Applying the extract of an Apply entry as the same manager changes
nothing; that of an Update entry changes no value but gives the manager an
Apply entry beside its Update one. An entry of /scale or /status comes out
as the object's kind, with the fields it owns: apply it with
--subresource (status), or send a Scale (scale).

A manager with entries under both operations, or at several apiVersions,
needs --operation. An entry recorded at another apiVersion than the object
was read at is extracted at its own version (read again from the server;
converted with --local).

--all-managers writes one document per managedFields entry.

Secret values are redacted unless --show-secret-values is given: a
redacted Secret manifest is not meant to be applied.`,
		Example: `  # What Argo CD applies to this Deployment
  kubectl ssa extract deployment/web --manager argocd-controller > web.yaml

  # What an autoscaler writes through /scale
  kubectl ssa extract deployment/web --manager kube-controller-manager --subresource scale

  # One document per manager
  kubectl ssa extract deployment/web --all-managers

  # From a saved object, without a cluster
  kubectl get deploy web -o yaml --show-managed-fields > live.yaml
  kubectl ssa extract --local -f live.yaml --manager helm`,
		ValidArgsFunction: completeResources(g),
		RunE:              runE(o),
	}
	f := cmd.Flags()
	o.sel.AddFlags(f, kube.SelectionFlags{What: "to extract from", Local: true})
	f.StringVar(&o.selector.Manager, "manager", "", "The field manager whose apply configuration to extract.")
	f.StringVar(&o.selector.Subresource, "subresource", "", "The manager's entry on this subresource (status, scale); default the main resource.")
	f.StringVar(&o.selector.Operation, "operation", "", "The manager's entry with this operation, Apply or Update, when it has both.")
	f.BoolVar(&o.all, "all-managers", false, "One document per managedFields entry.")
	f.StringSliceVar(&o.schemaFiles, "schema", nil, "With --local: CustomResourceDefinition files typing custom resources.")
	f.BoolVar(&o.showSecrets, "show-secret-values", false, "Print the values of Secret data instead of redacting them.")
	o.output.add(cmd, "yaml")
	_ = cmd.RegisterFlagCompletionFunc("manager", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("operation", cobra.FixedCompletions([]string{"Apply", "Update"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("subresource", cobra.FixedCompletions([]string{"status", "scale"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// complete reads each flag into its typed value: the output (the one
// printer; YAML documents take no palette).
func (o *extractOptions) complete(_ *cobra.Command, args []string) error {
	o.args = args
	return o.output.parse()
}

// validate checks the flags together.
func (o *extractOptions) validate() error {
	switch {
	case o.all && (o.selector.Manager != "" || o.selector.Subresource != "" || o.selector.Operation != ""):
		return errors.New("--all-managers extracts every entry: drop --manager, --subresource and --operation")
	case !o.all && o.selector.Manager == "":
		return errors.New("name the field manager with --manager, or give --all-managers")
	}
	if op := o.selector.Operation; op != "" && !strings.EqualFold(op, "Apply") && !strings.EqualFold(op, "Update") {
		return fmt.Errorf("--operation must be Apply or Update, not %q", op)
	}
	if len(o.schemaFiles) > 0 && !o.sel.Local {
		return errors.New("--schema goes with --local")
	}
	return o.sel.Validate(o.args)
}

func (o *extractOptions) run(ctx context.Context) error {
	o.sel.In = o.streams.In
	o.sel.CommandFlags = o.commandFlags
	objs, _, err := o.sel.Resolve(ctx, o.configFlags, o.args)
	var partial *kube.PartialError
	if err != nil && !errors.As(err, &partial) {
		return err
	}
	var src conflict.Source
	var cluster *kube.Cluster
	if o.sel.Local {
		crds, err := readCRDs(ctx, o.schemaFiles)
		if err != nil {
			return err
		}
		if src, err = conflict.NewOfflineSource(objs, crds); err != nil {
			return fmt.Errorf("--schema: %w", err)
		}
	} else {
		if cluster, err = o.cluster(); err != nil {
			return err
		}
		src = source.NewCluster(cluster, o.cacheDir())
	}
	xo := diff.ExtractOptions{All: o.all, Selector: o.selector, ShowSecretValues: o.showSecrets,
		Warn: func(w string) { fmt.Fprintln(render.Terminal(o.streams.ErrOut), "warning: "+w) }}
	if cluster != nil {
		xo.AtVersion = func(ctx context.Context, obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error) {
			return liveAtVersion(ctx, cluster, obj, version)
		}
	}
	extracted, skipped, err := diff.ExtractObjects(ctx, src, objs, xo)
	if err != nil {
		return err
	}
	for _, m := range skipped {
		render.Warning(o.streams.ErrOut, "skipped: "+m.Error())
	}
	if err := o.print(o.streams.Out, extracted); err != nil {
		return err
	}
	if partial != nil {
		return partial
	}
	return nil
}

// liveAtVersion reads obj at another apiVersion from the server, which
// converts it.
func liveAtVersion(ctx context.Context, cluster *kube.Cluster, obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error) {
	stub := &unstructured.Unstructured{Object: map[string]any{}}
	stub.SetAPIVersion(version)
	stub.SetKind(obj.GetKind())
	stub.SetName(obj.GetName())
	stub.SetNamespace(obj.GetNamespace())
	live, _, err := cluster.Live(ctx, stub)
	if err != nil {
		return nil, err
	}
	if live == nil {
		return nil, fmt.Errorf("%s: not found at %s", ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName()), version)
	}
	return live, nil
}

func ownerLabel(o v1alpha1.Owner) string {
	s := o.Manager + " (" + string(o.Operation)
	if o.Subresource != "" {
		s += ", /" + string(o.Subresource)
	}
	if o.Operation == v1alpha1.OperationUpdate && o.APIVersion != "" {
		s += ", " + o.APIVersion
	}
	return s + ")"
}

// print writes the documents: YAML documents with a comment naming each
// one's manager, or the other -o formats over the objects (a List when
// there are several).
func (o *extractOptions) print(w io.Writer, docs []diff.Extracted) error {
	if o.output.out.Name != render.FormatYAML {
		// JSON, jsonpath and go-template, over the object (a List of
		// several), as kubectl get prints them.
		items := make([]any, len(docs))
		for i, d := range docs {
			items[i] = d.Doc.Object
		}
		return o.output.out.Print(w, items, len(docs) != 1)
	}
	var sb strings.Builder
	for i, d := range docs {
		if i > 0 {
			sb.WriteString("---\n")
		}
		b, err := render.MarshalYAML(d.Doc.Object)
		if err != nil {
			return err
		}
		obj := d.Object
		sb.WriteString(render.Escape(fmt.Sprintf("# %s: %s", ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName()), ownerLabel(d.Owner))) + "\n")
		sb.Write(b)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// readCRDs reads --schema files.
func readCRDs(ctx context.Context, files []string) ([]*unstructured.Unstructured, error) {
	var crds []*unstructured.Unstructured
	for _, f := range files {
		ms, err := kube.ReadManifests(ctx, nil, &resource.FilenameOptions{Filenames: []string{f}})
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		for _, m := range ms {
			crds = append(crds, m.Object)
		}
	}
	return crds, nil
}
