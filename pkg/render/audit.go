package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// AuditOptions tune AuditReport.
type AuditOptions struct {
	// Wide adds the severity and the fix command of each finding.
	Wide bool
	// Clusters adds a CLUSTER column (several clusters were audited).
	Clusters bool
}

// AuditReport renders an audit: one row per finding, then the findings
// per code and per manager.
func AuditReport(w io.Writer, r *v1alpha1.AuditReport, o AuditOptions, p *Palette) error {
	w = Terminal(w) // the one way out: see terminal.go
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintf(w, "No findings in %d object%s.\n", r.Scanned, plural(r.Scanned))
		return err
	}
	t := &Table{Header: []string{"NAMESPACE", "KIND", "NAME", "FINDING", "MANAGER", "FIELDS"}}
	if o.Clusters {
		t.Header = append([]string{"CLUSTER"}, t.Header...)
	}
	if o.Wide {
		t.Header = append(t.Header, "SEVERITY", "FIX")
	}
	for _, f := range r.Findings {
		row := []Cell{C(f.Object.Namespace), C(f.Object.Kind), C(f.Object.Name), {Text: string(f.Code), Color: severityColor(f.Severity, p)}, {Text: ownerText(f), Color: func(s string) string { return p.Manager(f.Manager, s) }}, C(fieldsText(f))}
		if o.Clusters {
			row = append([]Cell{C(f.Cluster)}, row...)
		}
		if o.Wide {
			row = append(row, C(string(f.Severity)), C(f.Fix.String()))
		}
		t.Add(row...)
	}
	if err := t.Write(w, p); err != nil {
		return err
	}
	fmt.Fprintln(w)
	codes := &Table{Header: []string{"FINDING", "SEVERITY", "COUNT", "OBJECTS"}}
	for _, c := range r.Summary.Codes {
		codes.Add(Cell{Text: string(c.Code), Color: severityColor(c.Severity, p)}, C(string(c.Severity)), C(strconv.Itoa(c.Findings)), C(strconv.Itoa(c.Objects)))
	}
	if err := codes.Write(w, p); err != nil {
		return err
	}
	fmt.Fprintln(w)
	mgrs := &Table{Header: []string{"MANAGER", "COUNT", "OBJECTS", "FINDINGS"}}
	for _, m := range r.Summary.Managers {
		names := make([]string, len(m.Codes))
		for i, c := range m.Codes {
			names[i] = string(c)
		}
		mgrs.Add(Cell{Text: m.Manager, Color: func(s string) string { return p.Manager(m.Manager, s) }}, C(strconv.Itoa(m.Findings)), C(strconv.Itoa(m.Objects)), C(strings.Join(names, ",")))
	}
	if err := mgrs.Write(w, p); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d finding%s in %d object%s scanned.\n", len(r.Findings), plural(len(r.Findings)), r.Scanned, plural(r.Scanned))
	return err
}

func ownerText(f v1alpha1.Finding) string {
	if f.Manager == "" {
		return "-"
	}
	s := f.Manager + " (" + string(f.Operation)
	if f.Subresource != "" {
		s += " /" + string(f.Subresource)
	}
	s += ")"
	if len(f.SharedWith) > 0 {
		s += " + " + strings.Join(f.SharedWith, ", ")
	}
	return s
}

// fieldsText shows the first paths of a finding and how many more.
func fieldsText(f v1alpha1.Finding) string {
	const shown = 2
	if len(f.Paths) == 0 {
		return "-"
	}
	var parts []string
	for i, p := range f.Paths {
		if i == shown {
			parts = append(parts, fmt.Sprintf("(+%d)", len(f.Paths)-shown))
			break
		}
		parts = append(parts, p.String())
	}
	return strings.Join(parts, " ")
}

func severityColor(s v1alpha1.Severity, p *Palette) func(string) string {
	switch s {
	case v1alpha1.SeverityError:
		return p.Red
	case v1alpha1.SeverityWarning:
		return p.Yellow
	}
	return nil
}
