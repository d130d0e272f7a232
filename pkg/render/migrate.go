package render

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// MigrationReport renders a migration run: one line per object that
// changed, was skipped or failed (with the plan and a managedFields diff
// for client dry runs), then the summary.
func MigrationReport(w io.Writer, r *migrate.Report, p *Palette) {
	for _, o := range r.Objects {
		name := Escape(ownership.ObjectName(o.Object.Kind, o.Object.Namespace, o.Object.Name))
		var tag string
		switch o.Result {
		case migrate.ResultMigrated:
			tag = p.Green("migrated")
			if r.Mode == "undo" {
				tag = p.Green("restored")
			}
		case migrate.ResultWouldMigrate:
			tag = p.Yellow("would migrate")
			if r.Mode == "undo" {
				tag = p.Yellow("would restore")
			}
		case migrate.ResultNeedsWork:
			tag = p.Yellow("needs migration")
		case migrate.ResultSkipped:
			tag = p.Yellow("skipped")
		case migrate.ResultFailed:
			tag = p.Red("failed")
		default:
			tag = p.Dim(o.Result)
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
				who = fmt.Sprintf("%q (%s%s, %s): ", c.Manager, c.Operation, subDesc(c.Subresource), c.APIVersion)
			}
			fmt.Fprintf(w, "    %s %s%s\n", p.Dim("→"), Escape(who), Escape(c.Change))
		}
		if o.Result == migrate.ResultWouldMigrate && (o.Before != nil || o.After != nil) {
			for _, l := range lineDiff(managedYAML(o.Before), managedYAML(o.After)) {
				switch l[0] {
				case '+':
					fmt.Fprintln(w, "    "+p.Green(Escape(l)))
				case '-':
					fmt.Fprintln(w, "    "+p.Red(Escape(l)))
				default:
					fmt.Fprintln(w, "    "+p.Dim(Escape(l)))
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
	case (r.DryRun == migrate.DryRunClient || r.DryRun == migrate.DryRunServer) && r.Mode == "undo":
		verb = "to restore (dry run: nothing written)"
	case r.DryRun == migrate.DryRunClient || r.DryRun == migrate.DryRunServer:
		verb = "to migrate (dry run: nothing written)"
	case r.Mode == "undo":
		verb = "restored"
	case r.Check:
		verb = "need migration"
	}
	fmt.Fprintf(w, "%s %d scanned, %d %s, %d unchanged, %d skipped, %d failed\n", p.Bold("Summary:"), s.Scanned, s.Migrated, verb, s.Unchanged, s.Skipped, s.Failed)
	if len(r.Unlisted) > 0 {
		fmt.Fprintf(w, "%s %d kind(s) could not be listed: their objects were not looked at\n", p.Red("Partial:"), len(r.Unlisted))
	}
	if r.BackupDir != "" && s.Migrated > 0 && r.Mode != "undo" {
		fmt.Fprintf(w, "Backups: %s (undo: kubectl ssa migrate undo --backup-dir %s)\n", Escape(r.BackupDir), Escape(r.BackupDir))
	}
}

func managedYAML(entries []metav1.ManagedFieldsEntry) []string {
	if entries == nil {
		return nil
	}
	// Times are noise in a diff of ownership.
	cp := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		cp[i] = *e.DeepCopy()
		cp[i].Time = nil
	}
	b, err := yaml.Marshal(map[string]interface{}{"managedFields": cp})
	if err != nil {
		return []string{err.Error()}
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// lineDiff is a unified-style diff (without hunks: whole text) by the
// longest common subsequence; managedFields are small enough.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+b[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return out
}
