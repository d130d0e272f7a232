package render

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// MigrationReport renders a migration run: one line per object that
// changed, was skipped or failed (with the plan and a managedFields diff
// for client dry runs), then the summary.
func MigrationReport(w io.Writer, r *v1alpha1.MigrationReport, p *Palette) {
	w = Terminal(w) // the one way out: see terminal.go
	for _, o := range r.Objects {
		name := Escape(o.Object.Display())
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
		if o.Result == v1alpha1.ResultWouldMigrate && (o.Before != nil || o.After != nil) {
			for _, l := range managedFieldsDiff(o.Before, o.After) {
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

// managedFieldsDiff tells, entry by entry, how managedFields change: an
// entry that goes, one that comes, and the paths an entry gains or loses.
func managedFieldsDiff(before, after []metav1.ManagedFieldsEntry) []string {
	type entry struct {
		label string
		set   *fieldpath.Set
	}
	index := func(es []metav1.ManagedFieldsEntry) (map[string]entry, []string) {
		m := map[string]entry{}
		var order []string
		for _, e := range es {
			key := e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource + "\x00" + e.APIVersion
			set, err := ownership.DecodeEntry(e)
			if err != nil {
				set = &fieldpath.Set{}
			}
			label := fmt.Sprintf("%q (%s%s, %s)", e.Manager, e.Operation, subDesc(e.Subresource), e.APIVersion)
			if _, ok := m[key]; !ok {
				order = append(order, key)
			}
			m[key] = entry{label: label, set: set}
		}
		return m, order
	}
	b, bOrder := index(before)
	a, aOrder := index(after)
	var out []string
	paths := func(prefix string, s *fieldpath.Set) {
		s.Iterate(func(p fieldpath.Path) { out = append(out, prefix+"   "+pathlang.Path(p).String()) })
	}
	for _, k := range bOrder {
		old := b[k]
		nw, ok := a[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("- %s: entry removed (it owned %d paths)", old.label, old.set.Size()))
		case !old.set.Equals(nw.set):
			out = append(out, fmt.Sprintf("~ %s:", old.label))
			paths("-", old.set.Difference(nw.set))
			paths("+", nw.set.Difference(old.set))
		}
	}
	for _, k := range aOrder {
		if _, ok := b[k]; !ok {
			out = append(out, fmt.Sprintf("+ %s: new entry, owns:", a[k].label))
			paths("+", a[k].set)
		}
	}
	if len(out) == 0 {
		out = append(out, "  (managedFields unchanged)")
	}
	return out
}
