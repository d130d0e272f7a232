package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type migrateOptions struct {
	*globalOptions
	mode              migrate.Mode
	files             resource.FilenameOptions
	labelSelector     string
	allNamespaces     bool
	allKinds          bool
	target            string
	from              []string
	fold              bool
	removeLastApplied bool
	dryRun            string
	backupDir         string
	noBackup          bool
	concurrency       int
	verify            bool
	check             bool
	output            string
	force             bool
	unlisted          []string
}

func (o *migrateOptions) addSelectionFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&o.files.Filenames, "filename", "f", nil, "Files or directories naming the objects (- for standard input).")
	fs.BoolVarP(&o.files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	fs.StringVarP(&o.labelSelector, "selector", "l", "", "Label selector, as kubectl's (-l app=web,tier!=db).")
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Every namespace.")
	fs.BoolVar(&o.allKinds, "all-kinds", false, "Every kind the server lists and patches, found through discovery.")
	fs.StringVar(&o.dryRun, "dry-run", "none", `"none" writes; "client" prints the plan and the managedFields diff per object; "server" also sends each patch as a server dry run.`)
	fs.Lookup("dry-run").NoOptDefVal = "client"
	fs.StringVar(&o.backupDir, "backup-dir", "", "Where the original managedFields go before any write (default: a new timestamped directory under ~/.kube/ssa-backups, printed at the start).")
	fs.BoolVar(&o.noBackup, "no-backup", false, "Do not write backups (then undo is impossible).")
	fs.IntVar(&o.concurrency, "concurrency", 8, "How many objects are migrated at once.")
	fs.BoolVar(&o.verify, "verify", false, "After each write, re-read the object: every value must equal before (and, when moving client-side apply, applying the last-applied configuration as --field-manager must conflict with nothing and remove nothing).")
	fs.BoolVar(&o.check, "check", false, "Report which objects need migration and why, write nothing; exit 1 when any do.")
	fs.StringVarP(&o.output, "output", "o", "text", "Output: text, json or yaml.")
}

func newMigrateCmd(g *globalOptions) *cobra.Command {
	o := &migrateOptions{globalOptions: g, mode: migrate.ModeCSA, target: "kubectl"}
	cmd := &cobra.Command{
		Use:   "migrate [TYPE[/NAME]... | -f FILE | --all-kinds] [flags]",
		Short: "Move objects from client-side to server-side apply, and clean up field managers",
		Long: `Move objects from client-side apply to server-side apply by rewriting their
managedFields only: no field value changes.

For each object, the managedFields entries of client-side apply (Update
entries that own the kubectl.kubernetes.io/last-applied-configuration
annotation, plus the managers named with --from) become one Apply entry of
--field-manager (default "kubectl", what kubectl apply --server-side uses).
The target takes the fields the last-applied configuration declares, so the
next "kubectl apply --server-side" behaves as if the object had always been
server-side applied: a field you drop from the manifest is removed, and an
unchanged manifest applies without conflict. Entries recorded at another
apiVersion are carried over where their paths exist, otherwise the object
is skipped and the report says why; nothing is dropped silently.

The last-applied annotation is kept by default: kubectl keeps it current on
server-side applies by "kubectl", and going back to client-side apply needs
it. --remove-last-applied removes it (it counts against the 262,144-byte
annotation limit).

Other clean-ups are subcommands: rename/merge managers, fold
before-first-apply and ancient-changes, release a manager, rewrite
apiVersions the server no longer serves, and undo.

Safety: --dry-run=client prints each plan with a managedFields diff; every
patch carries the object's resourceVersion and is planned again after a 409;
the original managedFields are saved to --backup-dir first and "migrate
undo" restores them. Each object is migrated by one patch, so a run that is
killed leaves every object either untouched or migrated; running again
finishes the job and a finished run does nothing.

Exit status: 0 done; 1 with --check when objects need migration; 2 an error
before anything was written; 3 some objects failed (see the report).`,
		Example: `  # What would change, object by object, with managedFields diffs
  kubectl ssa migrate deployments,configmaps -n shop --dry-run=client

  # Which objects in the cluster still carry client-side apply, for CI
  kubectl ssa migrate --all-kinds -A --check

  # Migrate a whole namespace, checking every object afterwards
  kubectl ssa migrate --all-kinds -n shop --verify

  # A CI tool applied client-side as "ci-apply": move it to argocd-controller
  kubectl ssa migrate deploy -l app=web --from ci-apply --field-manager argocd-controller

  # Undo a migration
  kubectl ssa migrate undo --backup-dir ~/.kube/ssa-backups/migrate-20261121T101500Z`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), args) },
	}
	o.addSelectionFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.target, "field-manager", o.target, "The server-side applier that takes the fields.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, "More managers to fold into --field-manager, e.g. a CI tool that ran kubectl apply under its own name (repeatable).")
	cmd.Flags().BoolVar(&o.fold, "fold", false, "Also fold before-first-apply and ancient-changes into --field-manager.")
	cmd.Flags().BoolVar(&o.removeLastApplied, "remove-last-applied", false, "Also remove the last-applied annotation (then kubectl apply client-side can no longer compute removals).")
	cmd.ValidArgsFunction = completeResources(g)

	cmd.AddCommand(newMigrateSubcommand(g, "rename", migrate.ModeRename,
		"Rename or merge field managers into --field-manager",
		`Rename managers, or merge several into one: every entry of the --from
managers becomes an Apply entry of --field-manager (merged with the one it
may already have). Use it when a tool changes its manager name (helm to
argocd-controller, Helm 3 to Helm 4).`,
		`  # Helm 3 objects now deployed by Argo CD
  kubectl ssa migrate rename deploy,svc,cm -n shop --from helm --field-manager argocd-controller`, true))
	cmd.AddCommand(newMigrateSubcommand(g, "fold", migrate.ModeRename,
		"Fold before-first-apply and ancient-changes into --field-manager",
		`Give the fields owned by before-first-apply (what existed before the first
server-side apply) and ancient-changes (old Update managers the apiserver
merged) to --field-manager, so its next apply can remove them.`,
		`  # Let kubectl's applies own (and so be able to remove) what before-first-apply holds
  kubectl ssa migrate fold deploy/web --field-manager kubectl --dry-run=client`, false))
	cmd.AddCommand(newMigrateSubcommand(g, "release", migrate.ModeRelease,
		"Remove managers' entries: they own nothing afterwards, values unchanged",
		`Drop every entry of the --from managers. The fields keep their values; those
nobody else owns become unowned (no apply removes them).`,
		`  # A decommissioned tool still owns fields everywhere
  kubectl ssa migrate release --all-kinds -A --from old-operator --dry-run=client`, true))
	cmd.AddCommand(newMigrateSubcommand(g, "apiversions", migrate.ModeAPIVersions,
		"Rewrite entries recorded at apiVersions the server no longer serves",
		`Entries recorded at an apiVersion the server no longer serves are dropped by
the apiserver on the next write, and with them the ownership they record.
This rewrites them to the object's apiVersion where every path they own
exists there, and reports the others.`,
		`  # Find and fix stale apiVersions everywhere
  kubectl ssa migrate apiversions --all-kinds -A --dry-run=client`, false))
	cmd.AddCommand(newMigrateUndoCmd(g))
	return cmd
}

func newMigrateSubcommand(g *globalOptions, name string, mode migrate.Mode, short, long, example string, needsFrom bool) *cobra.Command {
	o := &migrateOptions{globalOptions: g, mode: mode, target: "kubectl", fold: name == "fold"}
	cmd := &cobra.Command{
		Use:     name + " [TYPE[/NAME]... | -f FILE | --all-kinds] [flags]",
		Short:   short,
		Long:    long,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if needsFrom && len(o.from) == 0 {
				return &ExitError{Code: 2, Err: errors.New("name the managers with --from")}
			}
			return o.run(cmd.Context(), args)
		},
	}
	o.addSelectionFlags(cmd.Flags())
	if mode != migrate.ModeRelease && mode != migrate.ModeAPIVersions {
		cmd.Flags().StringVar(&o.target, "field-manager", o.target, "The applier that takes the fields.")
	}
	if needsFrom {
		cmd.Flags().StringArrayVar(&o.from, "from", nil, "The managers to "+name+" (repeatable).")
	}
	cmd.ValidArgsFunction = completeResources(g)
	return cmd
}

func newMigrateUndoCmd(g *globalOptions) *cobra.Command {
	o := &migrateOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "undo --backup-dir DIR [flags]",
		Short: "Restore the managedFields saved by a migration",
		Long: `Restore each object's managedFields (and the last-applied annotation, if the
migration removed it) from a backup directory. An object whose managedFields
changed since the migration is refused (restoring would lose that write)
unless --force; an object deleted and created again is always refused.`,
		Example: `  # Undo the migration that saved its backups here
  kubectl ssa migrate undo --backup-dir ~/.kube/ssa-backups/migrate-20261121T101500Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.backupDir == "" {
				return &ExitError{Code: 2, Err: errors.New("--backup-dir is required: the directory migrate printed when it started")}
			}
			dr, err := migrate.ParseDryRun(o.dryRun)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			mc, c, err := o.clients()
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			_ = c
			rep, err := migrate.Undo(cmd.Context(), mc, o.backupDir, dr, o.force)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if err := o.finish(rep); err != nil {
				return err
			}
			if rep.Summary.Skipped > 0 {
				// Not everything was restored: say so to scripts.
				return &ExitError{Code: 3}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.backupDir, "backup-dir", "", "The backup directory of the migration to undo.")
	cmd.Flags().BoolVar(&o.force, "force", false, "Restore objects whose managedFields changed since the migration.")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", "none", `"none", "client" or "server".`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "Output: text, json or yaml.")
	return cmd
}

func (o *migrateOptions) clients() (migrate.Clients, *cluster, error) {
	c, err := newCluster(o.globalOptions)
	if err != nil {
		return migrate.Clients{}, nil, err
	}
	cfg, err := o.restConfig()
	if err != nil {
		return migrate.Clients{}, nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return migrate.Clients{}, nil, err
	}
	return migrate.Clients{Metadata: mc, Dynamic: c.dynamic}, c, nil
}

func (o *migrateOptions) run(ctx context.Context, args []string) error {
	dr, err := migrate.ParseDryRun(o.dryRun)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	switch o.output {
	case "text", "json", "yaml":
	default:
		return &ExitError{Code: 2, Err: fmt.Errorf("--output must be text, json or yaml, not %q", o.output)}
	}
	if err := ownership.ValidateManager(o.target); err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("--field-manager: %w", err)}
	}
	if len(args) == 0 && len(o.files.Filenames) == 0 && !o.allKinds {
		return &ExitError{Code: 2, Err: errors.New("name the objects: TYPE[/NAME]..., -f FILE, or --all-kinds (see --help)")}
	}
	if o.allKinds && (len(args) > 0 || len(o.files.Filenames) > 0) {
		return &ExitError{Code: 2, Err: errors.New("--all-kinds selects every kind: drop the TYPE arguments and -f")}
	}
	if o.concurrency < 1 {
		return &ExitError{Code: 2, Err: errors.New("--concurrency must be at least 1")}
	}
	if o.verify && (dr != migrate.DryRunNone || o.check) {
		return &ExitError{Code: 2, Err: errors.New("--verify checks real writes: drop --dry-run/--check or --verify")}
	}
	o.quietWarnings = o.allKinds
	clients, c, err := o.clients()
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	// Which kinds are served decides what is stale: read it fresh.
	c.discovery.Invalidate()
	if _, err := c.servedVersions(); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	src, err := o.source(c, clients.Metadata, args)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	backup := ""
	if dr == migrate.DryRunNone && !o.check && !o.noBackup {
		backup = o.backupDir
		if backup == "" {
			home, _ := os.UserHomeDir()
			backup = filepath.Join(home, ".kube", "ssa-backups", "migrate-"+time.Now().UTC().Format("20060102T150405Z"))
		}
		if err := os.MkdirAll(backup, 0o700); err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("creating the backup directory: %w", err)}
		}
		fmt.Fprintf(o.streams.ErrOut, "Backups go to %s (undo: kubectl ssa migrate undo --backup-dir %s)\n", backup, backup)
	}
	opts := migrate.RunOptions{
		Plan: migrate.Options{Mode: o.mode, Target: o.target, From: o.from, Fold: o.fold, RemoveLastApplied: o.removeLastApplied,
			Served: c.lockedServedKind, Now: time.Now()},
		DryRun: dr, Concurrency: o.concurrency, BackupDir: backup, Check: o.check, Verify: o.verify,
	}
	if o.verify && o.mode == migrate.ModeCSA {
		opts.VerifyApply = o.verifyApply(c)
	}
	if printers.IsTerminal(o.streams.ErrOut) && !render.IsData(o.output) {
		opts.Progress = func(s migrate.Summary) {
			fmt.Fprintf(o.streams.ErrOut, "\r%d scanned, %d to migrate or migrated, %d unchanged, %d skipped, %d failed", s.Scanned, s.Migrated, s.Unchanged, s.Skipped, s.Failed)
		}
	}
	rep, err := migrate.Run(ctx, clients, src, opts)
	if backup != "" {
		if entries, _ := os.ReadDir(backup); len(entries) == 0 {
			// A run that wrote nothing leaves no empty backup directory.
			_ = os.Remove(backup)
			fmt.Fprintf(o.streams.ErrOut, "No backup was needed (nothing was written); %s was removed\n", backup)
			if rep != nil {
				rep.BackupDir = ""
			}
		}
	}
	if opts.Progress != nil {
		fmt.Fprintln(o.streams.ErrOut)
	}
	if rep != nil {
		rep.Unlisted = append(rep.Unlisted, o.unlisted...)
	}
	if err != nil {
		code := 3 // some objects were done
		if rep == nil || rep.Summary.Scanned == 0 {
			code = 2 // nothing was written
		} else {
			_ = o.finish(rep)
		}
		return &ExitError{Code: code, Err: friendly(err)}
	}
	return o.finish(rep)
}

func (o *migrateOptions) finish(rep *migrate.Report) error {
	if render.IsData(o.output) {
		if err := render.Data(o.streams.Out, o.output, []interface{}{rep}, false); err != nil {
			return err
		}
	} else {
		pal, err := o.palette()
		if err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		render.MigrationReport(o.streams.Out, rep, pal)
	}
	if (o.mode == migrate.ModeRename || o.mode == migrate.ModeRelease) && rep.Summary.Migrated == 0 && rep.Summary.Failed == 0 {
		fmt.Fprintf(o.streams.ErrOut, "warning: none of the %d objects has a manager named %s\n", rep.Summary.Scanned, strings.Join(o.from, " or "))
	}
	if rep.Summary.Failed > 0 || len(rep.Unlisted) > 0 {
		return &ExitError{Code: 3}
	}
	if o.check && rep.Summary.Migrated > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// verifyApply checks that applying the object's last-applied
// configuration as the target would conflict with nothing and remove
// nothing, with the explain-conflict engine.
func (o *migrateOptions) verifyApply(c *cluster) func(context.Context, *unstructured.Unstructured) error {
	var mu sync.Mutex
	return func(ctx context.Context, obj *unstructured.Unstructured) error {
		la, ok := obj.GetAnnotations()[ownership.LastAppliedAnnotation]
		if !ok {
			return nil
		}
		applied := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(la), &applied.Object); err != nil {
			return fmt.Errorf("the last-applied annotation is not JSON: %w", err)
		}
		if applied.GetAPIVersion() != obj.GetAPIVersion() {
			return nil
		}
		applied.SetNamespace(obj.GetNamespace())
		mu.Lock()
		sch, err := c.schemaFor(ctx, applied, obj)
		mu.Unlock()
		if err != nil {
			return err
		}
		r, err := conflict.Simulate(conflict.Input{Live: obj, Applied: applied, FieldManager: o.target, Schema: sch,
			CRD: isCustom(obj.GroupVersionKind()), Served: c.lockedServedKind})
		if err != nil {
			return err
		}
		if r.Message != "" {
			// A conflict with a manager the migration should have folded
			// is its failure; any other existed before it.
			ours := false
			for _, cf := range r.Conflicts {
				ours = ours || cf.Manager == "kubectl-client-side-apply" || contains(o.from, cf.Manager)
			}
			if !ours {
				return &migrate.VerifyNote{Msg: fmt.Sprintf("the last-applied configuration conflicts with changes made after it (%s); the next apply of that manifest reports it instead of silently overwriting it", strings.ReplaceAll(r.Message, "\n", " "))}
			}
			return fmt.Errorf("applying the last-applied configuration as %q would fail: %s", o.target, r.Message)
		}
		if len(r.Removed) > 0 {
			return fmt.Errorf("applying the last-applied configuration as %q would remove %s", o.target, strings.Join(ownership.Strings(r.Removed), ", "))
		}
		return nil
	}
}

// source turns the selection into a stream of objects, listed in chunks
// and as metadata only.
func (o *migrateOptions) source(c *cluster, mc metadata.Interface, args []string) (migrate.Source, error) {
	ns := c.namespace
	if o.allNamespaces {
		ns = ""
	}
	var kinds []migrate.Resource
	type named struct {
		res  migrate.Resource
		ns   string
		name string
	}
	var names []named
	switch {
	case o.allKinds:
		lists, err := c.discovery.ServerPreferredResources()
		if err != nil && len(lists) == 0 {
			return nil, fmt.Errorf("discovering the server's resources: %w", err)
		}
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") || !hasVerb(r, "list") || !hasVerb(r, "patch") {
					continue
				}
				if !r.Namespaced && !o.allNamespaces && c.enforceNS {
					continue
				}
				kinds = append(kinds, migrate.Resource{GVR: gv.WithResource(r.Name), Kind: r.Kind, Namespaced: r.Namespaced})
			}
		}
	case len(o.files.Filenames) > 0:
		ms, err := readObjects(&o.files)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			mapping, err := c.mapping(m.obj.GroupVersionKind())
			if err != nil {
				return nil, err
			}
			n := m.obj.GetNamespace()
			if n == "" {
				n = c.namespace
			}
			names = append(names, named{res: resourceOf(mapping), ns: n, name: m.obj.GetName()})
		}
	default:
		var types []string
		var plain []string
		for _, a := range args {
			if t, n, ok := strings.Cut(a, "/"); ok {
				res, err := o.resolveType(c, t)
				if err != nil {
					return nil, err
				}
				names = append(names, named{res: res, ns: c.namespace, name: n})
			} else {
				plain = append(plain, a)
			}
		}
		if len(plain) > 0 {
			types = strings.Split(plain[0], ",")
			for _, t := range types {
				res, err := o.resolveType(c, t)
				if err != nil {
					return nil, err
				}
				if len(plain) > 1 {
					for _, n := range plain[1:] {
						names = append(names, named{res: res, ns: c.namespace, name: n})
					}
				} else {
					kinds = append(kinds, res)
				}
			}
		}
	}
	return func(ctx context.Context, yield func(migrate.Item) error) error {
		for _, n := range names {
			ri := mc.Resource(n.res.GVR)
			var m *metav1.PartialObjectMetadata
			var err error
			if n.res.Namespaced {
				m, err = ri.Namespace(n.ns).Get(ctx, n.name, metav1.GetOptions{})
			} else {
				m, err = ri.Get(ctx, n.name, metav1.GetOptions{})
			}
			if err != nil {
				return fmt.Errorf("%s/%s: %w", strings.ToLower(n.res.Kind), n.name, err)
			}
			if err := yield(migrate.Item{Resource: n.res, Meta: m}); err != nil {
				return err
			}
		}
		for _, k := range kinds {
			opts := metav1.ListOptions{LabelSelector: o.labelSelector, Limit: 500}
			for {
				var list *metav1.PartialObjectMetadataList
				var err error
				if k.Namespaced {
					list, err = mc.Resource(k.GVR).Namespace(ns).List(ctx, opts)
				} else {
					list, err = mc.Resource(k.GVR).List(ctx, opts)
				}
				if err != nil {
					if o.allKinds {
						// One kind we may not list does not stop the
						// others, but the run is then partial.
						o.unlisted = append(o.unlisted, fmt.Sprintf("%s: %s", k.GVR.GroupResource(), apiMessage(err)))
						break
					}
					return fmt.Errorf("listing %s: %w", k.GVR.GroupResource(), err)
				}
				for i := range list.Items {
					if err := yield(migrate.Item{Resource: k, Meta: &list.Items[i]}); err != nil {
						return err
					}
				}
				if list.Continue == "" {
					break
				}
				opts.Continue = list.Continue
			}
		}
		return nil
	}, nil
}

func (o *migrateOptions) resolveType(c *cluster, t string) (migrate.Resource, error) {
	gvr, err := c.mapper.ResourceFor(schema.ParseGroupResource(t).WithVersion(""))
	if err != nil {
		return migrate.Resource{}, fmt.Errorf("the server doesn't have a resource type %q: list the known types with kubectl api-resources", t)
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return migrate.Resource{}, err
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return migrate.Resource{}, err
	}
	return resourceOf(m), nil
}

func resourceOf(m *meta.RESTMapping) migrate.Resource {
	return migrate.Resource{GVR: m.Resource, Kind: m.GroupVersionKind.Kind, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
}

func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Message
	}
	return err.Error()
}
