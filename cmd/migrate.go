package cmd

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type migrateOptions struct {
	*globalOptions
	mode              v1alpha1.MigrationMode
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
	// needsFrom: the subcommand (rename, release) works on --from's
	// managers.
	needsFrom bool
	// needsManager: the subcommand (fold) has no default applier.
	needsManager bool

	// Set by complete.
	args []string
	dr   v1alpha1.DryRun
	pal  *render.Palette
	// printer prints the report, as data or as its text.
	printer printer[*v1alpha1.MigrationReport]
	// fieldManagerGiven: --field-manager was given, not its default.
	fieldManagerGiven bool
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
	o := &migrateOptions{globalOptions: g, mode: v1alpha1.MigrateCSA, target: "kubectl"}
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
		RunE: runE(o),
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.target, "field-manager", o.target, "The server-side applier that takes the fields.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, "More managers to fold into --field-manager, e.g. a CI tool that ran kubectl apply under its own name (repeatable).")
	cmd.Flags().BoolVar(&o.fold, "fold", false, "Also fold before-first-apply and ancient-changes into --field-manager.")
	cmd.Flags().BoolVar(&o.removeLastApplied, "remove-last-applied", false, "Also remove the last-applied annotation (then kubectl apply client-side can no longer compute removals).")
	cmd.ValidArgsFunction = completeResources(g)

	cmd.AddCommand(newMigrateSubcommand(g, "rename", v1alpha1.MigrateRename,
		"Rename or merge field managers into --field-manager",
		`Rename managers, or merge several into one: every entry of the --from
managers becomes an Apply entry of --field-manager (merged with the one it
may already have). Use it when a tool changes its manager name (helm to
argocd-controller, Helm 3 to Helm 4).`,
		`  # Helm 3 objects now deployed by Argo CD
  kubectl ssa migrate rename deploy,svc,cm -n shop --from helm --field-manager argocd-controller`, true))
	cmd.AddCommand(newMigrateSubcommand(g, "fold", v1alpha1.MigrateRename,
		"Fold before-first-apply and ancient-changes into --field-manager",
		`Give the fields owned by before-first-apply (what existed before the first
server-side apply) and ancient-changes (old Update managers the apiserver
merged) to --field-manager, so its next apply can remove them.`,
		`  # Let kubectl's applies own (and so be able to remove) what before-first-apply holds
  kubectl ssa migrate fold deploy/web --field-manager kubectl --dry-run=client`, false))
	cmd.AddCommand(newMigrateSubcommand(g, "release", v1alpha1.MigrateRelease,
		"Remove managers' entries: they own nothing afterwards, values unchanged",
		`Drop every entry of the --from managers. The fields keep their values; those
nobody else owns become unowned (no apply removes them).`,
		`  # A decommissioned tool still owns fields everywhere
  kubectl ssa migrate release --all-kinds -A --from old-operator --dry-run=client`, true))
	cmd.AddCommand(newMigrateSubcommand(g, "apiversions", v1alpha1.MigrateAPIVersions,
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

func newMigrateSubcommand(g *globalOptions, name string, mode v1alpha1.MigrationMode, short, long, example string, needsFrom bool) *cobra.Command {
	o := &migrateOptions{globalOptions: g, mode: mode, target: "kubectl", fold: name == "fold", needsFrom: needsFrom, needsManager: name == "fold"}
	cmd := &cobra.Command{
		Use:     name + " [TYPE[/NAME]... | -f FILE | -k DIR | --all-kinds] [flags]",
		Short:   short,
		Long:    long,
		Example: example,
		RunE:    runE(o),
	}
	o.addFlags(cmd)
	if mode != v1alpha1.MigrateRelease && mode != v1alpha1.MigrateAPIVersions {
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
	undo := migrateUndo{o}
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
		RunE: runE(undo),
	}
	cmd.Flags().StringVar(&o.backupDir, "backup-dir", "", "The backup directory of the migration to undo.")
	cmd.Flags().BoolVar(&o.force, "force", false, "Restore objects whose managedFields changed since the migration.")
	o.dryRun.add(cmd.Flags(), `"none", "client" or "server".`)
	o.output.add(cmd, "text", "text")
	return cmd
}
