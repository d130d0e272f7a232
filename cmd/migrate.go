package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

type migrateOptions struct {
	*globalOptions
	mode              migrate.Mode
	sel               kube.Selection
	target            string
	from              []string
	fold              bool
	removeLastApplied bool
	dryRun            dryRunFlag
	backupDir         string
	noBackup          bool
	concurrency       int
	verify            bool
	check             bool
	output            outputFlag
	force             bool
}

func (o *migrateOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.sel.AddFlags(fs, kube.SelectionFlags{What: "to migrate", AllKinds: true})
	o.dryRun.add(fs, `"none" writes; "client" prints the plan and the managedFields diff per object; "server" also sends each patch as a server dry run.`)
	fs.StringVar(&o.backupDir, "backup-dir", "", "Where the original managedFields go before any write (default: a new timestamped directory under ~/.kube/ssa-backups, printed at the start).")
	fs.BoolVar(&o.noBackup, "no-backup", false, "Do not write backups (then undo is impossible).")
	fs.IntVar(&o.concurrency, "concurrency", 8, "How many objects are migrated at once.")
	fs.BoolVar(&o.verify, "verify", false, "After each write, re-read the object: every value must equal before (and, when moving client-side apply, applying the last-applied configuration as --field-manager must conflict with nothing and remove nothing).")
	fs.BoolVar(&o.check, "check", false, "Report which objects need migration and why, write nothing; exit 1 when any do.")
	o.output.add(cmd, "text", "text")
}

func newMigrateCmd(g *globalOptions) *cobra.Command {
	o := &migrateOptions{globalOptions: g, mode: migrate.ModeCSA, target: "kubectl"}
	cmd := &cobra.Command{
		Use:   "migrate [TYPE[/NAME]... | -f FILE | -k DIR | --all-kinds] [flags]",
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
annotation limit); its backup keeps the annotation for undo to restore,
and for a Secret that is its values (client-side apply copies the whole
object into it, stringData in clear): backups are written readable by you
alone (files 0600, directories 0700); delete them once you no longer need
undo.

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
	o.addFlags(cmd)
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
		Use:     name + " [TYPE[/NAME]... | -f FILE | -k DIR | --all-kinds] [flags]",
		Short:   short,
		Long:    long,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if needsFrom && len(o.from) == 0 {
				return errors.New("name the managers with --from")
			}
			return o.run(cmd.Context(), args)
		},
	}
	o.addFlags(cmd)
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
			return o.undo(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.backupDir, "backup-dir", "", "The backup directory of the migration to undo.")
	cmd.Flags().BoolVar(&o.force, "force", false, "Restore objects whose managedFields changed since the migration.")
	o.dryRun.add(cmd.Flags(), `"none", "client" or "server".`)
	o.output.add(cmd, "text", "text")
	return cmd
}

func (o *migrateOptions) undo(ctx context.Context) error {
	if o.backupDir == "" {
		return errors.New("--backup-dir is required: the directory migrate printed when it started")
	}
	dr, err := o.dryRun.parse()
	if err != nil {
		return err
	}
	if err := o.output.parse(); err != nil {
		return err
	}
	c, err := o.cluster()
	if err != nil {
		return err
	}
	rep, err := migrate.Undo(ctx, migrate.Clients{Metadata: c.Metadata, Dynamic: c.Dynamic}, o.backupDir, dr, o.force)
	if err != nil {
		return err
	}
	if err := o.finish(rep); err != nil {
		return err
	}
	if rep.Summary.Skipped > 0 {
		// Not everything was restored: say so to scripts.
		return exit(CodePartial)
	}
	return nil
}

func (o *migrateOptions) validate(args []string) (write.DryRun, error) {
	dr, err := o.dryRun.parse()
	if err != nil {
		return "", err
	}
	if err := o.output.parse(); err != nil {
		return "", err
	}
	if err := ownership.ValidateManager(o.target); err != nil {
		return "", fmt.Errorf("--field-manager: %w", err)
	}
	if o.concurrency < 1 {
		return "", errors.New("--concurrency must be at least 1")
	}
	if o.verify && (dr != write.DryRunNone || o.check) {
		return "", errors.New("--verify checks real writes: drop --dry-run/--check or --verify")
	}
	if o.check && dr != write.DryRunNone {
		return "", errors.New("--check writes nothing already: drop --dry-run (or --check, to see each plan)")
	}
	if o.noBackup && o.backupDir != "" {
		return "", errors.New("--no-backup writes no backup to --backup-dir: drop one of them")
	}
	if o.backupDir != "" && (dr != write.DryRunNone || o.check) {
		return "", errors.New("--backup-dir is for real writes, and --dry-run/--check writes nothing: drop --backup-dir")
	}
	return dr, o.sel.Validate(args)
}

func (o *migrateOptions) run(ctx context.Context, args []string) error {
	dr, err := o.validate(args)
	if err != nil {
		return err
	}
	o.quietWarnings = o.sel.AllKinds
	c, err := o.cluster()
	if err != nil {
		return err
	}
	// Which kinds are served decides what is stale: read it fresh.
	c.Refresh()
	if err := c.CheckServer(); err != nil {
		return err
	}
	o.sel.In = o.streams.In
	backup := ""
	if dr == write.DryRunNone && !o.check && !o.noBackup {
		backup = o.backupDir
		if backup == "" {
			home, _ := os.UserHomeDir()
			backup = filepath.Join(home, ".kube", "ssa-backups", "migrate-"+time.Now().UTC().Format("20060102T150405Z"))
		}
		if err := os.MkdirAll(backup, 0o700); err != nil {
			return fmt.Errorf("creating the backup directory: %w", err)
		}
	}
	// Where backups go is said once the input has an object: an input
	// error is then the only line.
	var unlisted []string
	announced := false
	src := func(ctx context.Context, yield func(migrate.Item) error) error {
		var err error
		unlisted, err = o.sel.Stream(ctx, c, args, kube.StreamOptions{Verbs: []string{"patch"}}, func(it kube.Item) error {
			if backup != "" && !announced {
				announced = true
				fmt.Fprintf(o.streams.ErrOut, "Backups go to %s (undo: kubectl ssa migrate undo --backup-dir %s)\n", backup, backup)
			}
			return yield(migrate.Item{Resource: migrate.Resource(it.Resource), Meta: it.Meta})
		})
		return err
	}
	opts := migrate.RunOptions{
		Plan: migrate.Options{Mode: o.mode, Target: o.target, From: o.from, Fold: o.fold, RemoveLastApplied: o.removeLastApplied,
			Served: c.ServedKind, Now: time.Now()},
		DryRun: dr, Concurrency: o.concurrency, BackupDir: backup, Check: o.check, Verify: o.verify,
	}
	if o.verify && o.mode == migrate.ModeCSA {
		opts.VerifyApply = o.verifyApply(c)
	}
	if render.IsTerminal(o.streams.ErrOut) && !o.output.out.IsData() {
		opts.Progress = func(s migrate.Summary) {
			fmt.Fprintf(o.streams.ErrOut, "\r%d scanned, %d to migrate or migrated, %d unchanged, %d skipped, %d failed", s.Scanned, s.Migrated, s.Unchanged, s.Skipped, s.Failed)
		}
	}
	rep, err := migrate.Run(ctx, migrate.Clients{Metadata: c.Metadata, Dynamic: c.Dynamic}, src, opts)
	if backup != "" {
		if entries, _ := os.ReadDir(backup); len(entries) == 0 {
			// A run that wrote nothing leaves no empty backup directory.
			_ = os.Remove(backup)
			if announced {
				fmt.Fprintf(o.streams.ErrOut, "No backup was needed (nothing was written); %s was removed\n", backup)
			}
			if rep != nil {
				rep.BackupDir = ""
			}
		}
	}
	if opts.Progress != nil {
		fmt.Fprintln(o.streams.ErrOut)
	}
	if rep != nil {
		rep.Unlisted = append(rep.Unlisted, unlisted...)
	}
	if err != nil {
		code := CodePartial // some objects were done
		if rep == nil || rep.Summary.Scanned == 0 {
			code = CodeError // nothing was written
		} else {
			_ = o.finish(rep)
		}
		return &ExitError{Code: code, Err: kube.Friendly(err)}
	}
	return o.finish(rep)
}

func (o *migrateOptions) finish(rep *migrate.Report) error {
	if o.output.out.IsData() {
		if err := o.output.out.Print(o.streams.Out, []interface{}{rep}, false); err != nil {
			return err
		}
	} else {
		pal, err := o.palette()
		if err != nil {
			return err
		}
		render.MigrationReport(o.streams.Out, rep, pal)
	}
	if (o.mode == migrate.ModeRename || o.mode == migrate.ModeRelease) && rep.Summary.Migrated == 0 && rep.Summary.Failed == 0 {
		names := make([]string, len(o.from))
		for i, m := range o.from {
			names[i] = fmt.Sprintf("%q", m)
		}
		// The names are the user's: escaped on the way to the terminal.
		render.Warning(o.streams.ErrOut, fmt.Sprintf("none of the %d objects has a manager named %s", rep.Summary.Scanned, strings.Join(names, " or ")))
	}
	if rep.Summary.Failed > 0 || len(rep.Unlisted) > 0 {
		return exit(CodePartial)
	}
	if o.check && rep.Summary.Migrated > 0 {
		return exit(CodeFound)
	}
	return nil
}

// verifyApply checks that applying the object's last-applied
// configuration as the target would conflict with nothing and remove
// nothing, with the explain-conflict engine.
// goValues are Go values printed with %v ({0xc000123 ...}, 0xc000123):
// memory addresses that mean nothing to a user.
var goValues = regexp.MustCompile(`\{0x[0-9a-f]+[^{}]*\}|0x[0-9a-f]{6,}`)

func (o *migrateOptions) verifyApply(c *kube.Cluster) func(context.Context, *unstructured.Unstructured) error {
	var mu sync.Mutex
	src := source.NewCluster(c, o.cacheDir())
	return func(ctx context.Context, obj *unstructured.Unstructured) error {
		la, ok := obj.GetAnnotations()[ownership.LastAppliedAnnotation]
		if !ok {
			return nil
		}
		applied := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(la), &applied.Object); err != nil {
			return fmt.Errorf("the last-applied annotation is not JSON: %w", err)
		}
		if applied.GetAPIVersion() != obj.GetAPIVersion() || applied.GetKind() != obj.GetKind() {
			// Written at another version, or a controller's copy of its
			// owner's annotation (a StatefulSet's on a ControllerRevision):
			// nothing to apply to this object.
			return nil
		}
		applied.SetNamespace(obj.GetNamespace())
		mu.Lock() // the schema loader is not safe for concurrent use
		tc, _, err := conflict.TypeConverter(ctx, src, applied, obj)
		mu.Unlock()
		if err != nil {
			return err
		}
		r, err := conflict.Simulate(conflict.Input{Live: obj, Applied: applied, FieldManager: o.target, Schema: tc,
			CRD: kube.IsCustom(obj.GroupVersionKind()), Served: c.ServedKind})
		if err != nil {
			// The field manager's errors can quote Go values: keep the words.
			return fmt.Errorf("could not predict applying the last-applied configuration as %q: %s", o.target, goValues.ReplaceAllString(err.Error(), "…"))
		}
		if r.Message != "" {
			// A conflict with a manager the migration should have folded
			// is its failure; any other existed before it.
			ours := false
			for _, cf := range r.Conflicts {
				ours = ours || cf.Manager == ownership.ClientSideApplyManager || slices.Contains(o.from, cf.Manager)
			}
			if !ours {
				return &migrate.VerifyNote{Msg: fmt.Sprintf("the last-applied configuration conflicts with changes made after it (%s); the next apply of that manifest reports it instead of silently overwriting it", strings.ReplaceAll(r.Message, "\n", " "))}
			}
			return fmt.Errorf("applying the last-applied configuration as %q would fail: %s", o.target, r.Message)
		}
		if changed := r.Changes(); len(changed) > 0 {
			return fmt.Errorf("applying the last-applied configuration as %q would remove or reset %s", o.target, strings.Join(pathlang.Strings(changed), ", "))
		}
		return nil
	}
}
