package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// complete reads each flag into its typed value: the dry run and the
// output (the one printer, with its palette).
func (o *migrateOptions) complete(cmd *cobra.Command, args []string) (err error) {
	o.args = args
	o.fieldManagerGiven = cmd.Flags().Changed("field-manager")
	if o.dr, err = o.dryRun.parse(); err != nil {
		return err
	}
	if err := o.output.parse(); err != nil {
		return err
	}
	if o.pal, err = o.palette(); err != nil {
		return err
	}
	o.choosePrinter()
	return nil
}

// choosePrinter chooses the printer of -o, once: the report as data, or
// as its text (a summary, then each object's plan or result).
func (o *migrateOptions) choosePrinter() {
	o.printer = choosePrinter(o.streams.Out, o.output.out, nil, textView[*v1alpha1.MigrationReport]{
		one: func(w io.Writer, rep *v1alpha1.MigrationReport) error {
			render.MigrationReport(w, rep, migrate.EntryChanges(rep), o.pal)
			return nil
		},
	})
}

// validate checks the flags together.
func (o *migrateOptions) validate() error {
	if o.needsFrom && len(o.from) == 0 {
		return errors.New("name the managers with --from")
	}
	if o.needsManager && !o.fieldManagerGiven {
		// A default is a made-up applier here: its next apply
		// would delete every field it was given and does not send.
		return errors.New("name the applier that takes the fields with --field-manager (the manager that applies these objects; who-owns -o managers lists them)")
	}
	dr := o.dr
	if err := ownership.ValidateManager(o.target); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	if o.concurrency < 1 {
		return errors.New("--concurrency must be at least 1")
	}
	if o.concurrency > migrate.MaxConcurrency {
		return fmt.Errorf("--concurrency must be at most %d (objects migrated at once)", migrate.MaxConcurrency)
	}
	if o.verify && (dr != v1alpha1.DryRunNone || o.check) {
		return errors.New("--verify checks real writes: drop --dry-run/--check or --verify")
	}
	if o.check && dr != v1alpha1.DryRunNone {
		return errors.New("--check writes nothing already: drop --dry-run (or --check, to see each plan)")
	}
	if o.noBackup && o.backupDir != "" {
		return errors.New("--no-backup writes no backup to --backup-dir: drop one of them")
	}
	if o.backupDir != "" && (dr != v1alpha1.DryRunNone || o.check) {
		return errors.New("--backup-dir is for real writes, and --dry-run/--check writes nothing: drop --backup-dir")
	}
	return o.sel.Validate(o.args)
}

// migrateUndo is "migrate undo": migrate's options, its own checks and
// run.
type migrateUndo struct{ *migrateOptions }

func (o migrateUndo) validate() error {
	if o.backupDir == "" {
		return errors.New("--backup-dir is required: the directory migrate printed when it started")
	}
	return nil
}

func (o migrateUndo) run(ctx context.Context) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	rep, err := migrate.Undo(ctx, migrate.Clients{Metadata: c.Metadata, Dynamic: c.Dynamic}, o.backupDir, o.dr, o.force)
	if stop := stopped(ctx, "undo stopped after %d objects (%d restored): run the same command again to restore the rest", summaryOf(rep).Scanned, summaryOf(rep).Migrated); stop != nil && errors.Is(err, context.Canceled) {
		return o.printStopped(rep, stop)
	}
	if err != nil {
		return err
	}
	if err := o.finish(rep); err != nil {
		return err
	}
	return exitWith(undoCode(rep))
}

func (o *migrateOptions) run(ctx context.Context) error {
	dr, args := o.dr, o.args
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
	backup, madeBackup := "", false
	if dr == v1alpha1.DryRunNone && !o.check && !o.noBackup {
		var err error
		if backup, madeBackup, err = o.backupDirectory(); err != nil {
			return fmt.Errorf("creating the backup directory: %w", err)
		}
	}
	// Where backups go is said once the input has an object: an input
	// error is then the only line.
	var unlisted []string
	announced := false
	src := func(ctx context.Context, yield func(migrate.Item) error) error {
		var err error
		unlisted, err = o.sel.Stream(ctx, c, args, kube.StreamOptions{Verbs: []string{"patch"}, ResolveFirst: true}, func(it kube.Item) error {
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
	if o.verify && o.mode == v1alpha1.MigrateCSA {
		opts.VerifyApply = o.verifyApply(c)
	}
	var progress struct {
		sync.Mutex
		sum v1alpha1.MigrationSummary
	}
	opts.Progress = func(s v1alpha1.MigrationSummary) {
		progress.Lock()
		defer progress.Unlock()
		progress.sum = s
	}
	line := startProgress(o.streams.ErrOut, o.output.isData(), func() string {
		progress.Lock()
		defer progress.Unlock()
		s := progress.sum
		if s.Scanned == 0 {
			// (Not before the line that says where backups go.)
			return ""
		}
		return fmt.Sprintf("%d scanned, %d to migrate or migrated, %d unchanged, %d skipped, %d failed", s.Scanned, s.Migrated, s.Unchanged, s.Skipped, s.Failed)
	})
	rep, err := migrate.Run(ctx, migrate.Clients{Metadata: c.Metadata, Dynamic: c.Dynamic}, src, opts)
	line.done()
	if backup != "" {
		if entries, _ := os.ReadDir(backup); len(entries) == 0 {
			// A run that wrote nothing leaves no empty backup directory
			// it made (one the user made stays).
			if madeBackup {
				_ = os.Remove(backup)
			}
			if announced && madeBackup {
				fmt.Fprintf(o.streams.ErrOut, "No backup was needed (nothing was written); %s was removed\n", backup)
			}
			if rep != nil {
				rep.BackupDir = ""
			}
		}
	}
	if rep != nil {
		rep.Unlisted = append(rep.Unlisted, unlisted...)
	}
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		sum := summaryOf(rep)
		where := fmt.Sprintf("migrate stopped after %d objects (%d migrated, %d failed; each one begun was finished): the rest was not read; run the same command again to go on", sum.Scanned, sum.Migrated, sum.Failed)
		if rep != nil && rep.BackupDir != "" {
			where += " (undo: kubectl ssa migrate undo --backup-dir " + rep.BackupDir + ")"
		}
		return o.printStopped(rep, stopped(ctx, "%s", where))
	}
	if err != nil {
		code := migrationErrorCode(rep)
		if code == CodePartial {
			_ = o.finish(rep)
		}
		return &ExitError{Code: code, Err: c.Friendly(err)}
	}
	return o.finish(rep)
}

// backupDirectory makes the directory of the run's backups: --backup-dir,
// or a new one of its own under ~/.kube/ssa-backups (two runs in the same
// second get two: neither would find the other's backups there). made
// tells that this run made it (only then is it removed when it stays
// empty).
func (o *migrateOptions) backupDirectory() (dir string, made bool, err error) {
	if o.backupDir != "" {
		_, statErr := os.Stat(o.backupDir)
		made = errors.Is(statErr, os.ErrNotExist)
		return o.backupDir, made, os.MkdirAll(o.backupDir, 0o700)
	}
	home, _ := os.UserHomeDir()
	parent := filepath.Join(home, ".kube", "ssa-backups")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", false, err
	}
	base := filepath.Join(parent, "migrate-"+time.Now().UTC().Format("20060102T150405Z"))
	dir = base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o700)
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return dir, err == nil, err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// summaryOf is rep's summary, or zero without a report.
func summaryOf(rep *v1alpha1.MigrationReport) v1alpha1.MigrationSummary {
	if rep == nil {
		return v1alpha1.MigrationSummary{}
	}
	return rep.Summary
}

// printStopped prints the report of the objects done before a signal
// stopped the run (without finish's warnings and exit codes: the stop
// line is the answer), and returns stop.
func (o *migrateOptions) printStopped(rep *v1alpha1.MigrationReport, stop error) error {
	if rep == nil || rep.Summary.Scanned == 0 {
		return stop
	}
	if err := o.printReport(rep); err != nil {
		return err
	}
	return stop
}

func (o *migrateOptions) printReport(rep *v1alpha1.MigrationReport) error {
	if o.printer == nil {
		// Options made without complete (a test's).
		pal, err := o.palette()
		if err != nil {
			return err
		}
		o.pal = pal
		o.choosePrinter()
	}
	return printAll(o.printer, []*v1alpha1.MigrationReport{rep}, false)
}

func (o *migrateOptions) finish(rep *v1alpha1.MigrationReport) error {
	if err := o.printReport(rep); err != nil {
		return err
	}
	if (o.mode == v1alpha1.MigrateRename || o.mode == v1alpha1.MigrateRelease) && rep.Summary.Migrated == 0 && rep.Summary.Failed == 0 {
		names := make([]string, len(o.from))
		for i, m := range o.from {
			names[i] = fmt.Sprintf("%q", m)
		}
		// The names are the user's: escaped on the way to the terminal.
		render.Warning(o.streams.ErrOut, fmt.Sprintf("none of the %d objects has a manager named %s", rep.Summary.Scanned, strings.Join(names, " or ")))
	}
	return exitWith(migrationCode(rep, o.check))
}
