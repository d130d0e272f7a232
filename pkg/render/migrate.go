package render

import (
	"fmt"
	"io"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// MigrationReport renders a migration run: one line per object that
// changed, was skipped or failed (with the plan and, for client dry runs,
// how its managedFields change: entries[i] for r.Objects[i], as
// migrate.EntryChanges has them), then the summary.
func MigrationReport(w io.Writer, r *v1alpha1.MigrationReport, entries [][]ownership.EntryChange, p *Palette) {
	w = Terminal(w) // the one way out: see terminal.go
	for i, o := range r.Objects {
		name := Escape(o.Object.Display())
		if o.Object.Name == "" && o.Backup != "" {
			// A backup undo could not read names no object: its file.
			name = Escape(o.Backup)
		}
		var tag string
		switch o.Result {
		case v1alpha1.ResultMigrated:
			tag = p.Green("migrated")
			if r.Mode == v1alpha1.MigrateUndo {
				tag = p.Green("restored")
			}
		case v1alpha1.ResultWouldMigrate:
			tag = p.Yellow("would migrate")
			if r.Mode == v1alpha1.MigrateUndo {
				tag = p.Yellow("would restore")
			}
		case v1alpha1.ResultNeedsWork:
			tag = p.Yellow("needs migration")
		case v1alpha1.ResultSkipped:
			tag = p.Yellow("skipped")
		case v1alpha1.ResultFailed:
			tag = p.Red("failed")
		default:
			tag = p.Dim(string(o.Result))
		}
		line := tag + "  " + name
		if o.Reason != "" {
			line += ": " + Escape(o.Reason)
		}
		fmt.Fprintln(w, line)
		for _, f := range o.Findings {
			fmt.Fprintf(w, "    %s %s\n", p.Dim("-"), Escape(f))
		}
		for _, c := range o.Changes {
			who := ""
			if c.Manager != "" {
				who = fmt.Sprintf("%q (%s%s, %s): ", c.Manager, c.Operation, subDesc(string(c.Subresource)), c.APIVersion)
			}
			fmt.Fprintf(w, "    %s %s%s\n", p.Dim("→"), Escape(who), Escape(c.Change))
		}
		if i < len(entries) && entries[i] != nil {
			for _, l := range entryLines(entries[i]) {
				switch l[0] {
				case '+':
					fmt.Fprintln(w, "      "+p.Green(Escape(l)))
				case '-':
					fmt.Fprintln(w, "      "+p.Red(Escape(l)))
				default:
					fmt.Fprintln(w, "      "+p.Dim(Escape(l)))
				}
			}
		}

	}
	for _, u := range r.Unlisted {
		fmt.Fprintf(w, "%s  %s\n", p.Red("not listed"), Escape(u))
	}
	s := r.Summary
	verb := "migrated"
	switch {
	case r.DryRun.Enabled() && r.Mode == v1alpha1.MigrateUndo:
		verb = "to restore (dry run: nothing written)"
	case r.DryRun.Enabled():
		verb = "to migrate (dry run: nothing written)"
	case r.Mode == v1alpha1.MigrateUndo:
		verb = "restored"
	case r.Check:
		verb = "need migration"
	}
	fmt.Fprintf(w, "%s %d scanned, %d %s, %d unchanged, %d skipped, %d failed\n", p.Bold("Summary:"), s.Scanned, s.Migrated, verb, s.Unchanged, s.Skipped, s.Failed)
	if len(r.Unlisted) > 0 {
		fmt.Fprintf(w, "%s %d kind(s) could not be listed: their objects were not looked at\n", p.Red("Partial:"), len(r.Unlisted))
	}
	if r.BackupDir != "" && s.Migrated > 0 && r.Mode != v1alpha1.MigrateUndo {
		fmt.Fprintf(w, "Backups: %s (undo: kubectl ssa migrate undo --backup-dir %s)\n", Escape(r.BackupDir), Escape(r.BackupDir))
	}
}

// entryLines are the lines of a managedFields rewrite, entry by entry: an
// entry that goes, one that comes, and the paths an entry loses or gains.
func entryLines(changes []ownership.EntryChange) []string {
	var out []string
	paths := func(prefix string, ps []pathlang.Path) {
		for _, p := range ps {
			out = append(out, prefix+"   "+p.String())
		}
	}
	for _, c := range changes {
		label := fmt.Sprintf("%q (%s%s, %s)", c.Owner.Manager, c.Owner.Operation, subDesc(string(c.Owner.Subresource)), c.Owner.APIVersion)
		switch c.Change {
		case ownership.EntryRemoved:
			out = append(out, fmt.Sprintf("- %s: entry removed (it owned %s)", label, count(c.Owned, "path")))
		case ownership.EntryChanged:
			out = append(out, fmt.Sprintf("~ %s:", label))
			paths("-", c.Lost)
			paths("+", c.Gained)
		case ownership.EntryAdded:
			out = append(out, fmt.Sprintf("+ %s: new entry, owns:", label))
			paths("+", c.Gained)
		}
	}
	if len(out) == 0 {
		out = append(out, "  (managedFields unchanged)")
	}
	return out
}
