package html

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

var auditPage = pageOf("audit.tmpl")

// openFindings is how many findings a page shows open: past it, the
// namespaces start folded (their counts say what they hold), so that a
// fleet's page loads at once; printing opens them.
const openFindings = 2000

// Audit writes an audit (-o html): the findings grouped by cluster,
// namespace and object, with their counts by code, severity and
// manager, and filters by code and severity (the page's script: without
// it every finding shows). failed are the run's errors: the page says
// it is incomplete.
func Audit(w io.Writer, reports []*v1alpha1.AuditReport, failed ...error) error {
	b := auditBody{}
	for _, r := range reports {
		b.Reports = append(b.Reports, auditOf(r))
	}
	return write(w, auditPage, "Audit of managedFields", "audit", b, failed)
}

type auditBody struct {
	Reports []auditReport
}

// auditReport is one report: its counts, filters and groups.
type auditReport struct {
	R        *v1alpha1.AuditReport
	Clusters []cluster
	// Severities are the severities found, highest first, with counts.
	Severities []count
	Open       bool
}

type count struct {
	Name string
	N    int
}

type cluster struct {
	Name       string
	Findings   int
	Namespaces []namespace
}

type namespace struct {
	Name     string
	Findings int
	Objects  []object
}

type object struct {
	Ref      v1alpha1.ObjectRef
	Findings []v1alpha1.Finding
}

// auditOf groups a report's findings, in their order (audit sorts them
// by cluster, namespace and object), by cluster, namespace and object.
func auditOf(r *v1alpha1.AuditReport) auditReport {
	out := auditReport{R: r, Open: len(r.Findings) <= openFindings}
	sev := map[v1alpha1.Severity]int{}
	for _, f := range r.Findings {
		sev[f.Severity]++
		if n := len(out.Clusters); n == 0 || out.Clusters[n-1].Name != f.Cluster {
			out.Clusters = append(out.Clusters, cluster{Name: f.Cluster})
		}
		c := &out.Clusters[len(out.Clusters)-1]
		c.Findings++
		if n := len(c.Namespaces); n == 0 || c.Namespaces[n-1].Name != f.Object.Namespace {
			c.Namespaces = append(c.Namespaces, namespace{Name: f.Object.Namespace})
		}
		ns := &c.Namespaces[len(c.Namespaces)-1]
		ns.Findings++
		if n := len(ns.Objects); n == 0 || ns.Objects[n-1].Ref != f.Object {
			ns.Objects = append(ns.Objects, object{Ref: f.Object})
		}
		o := &ns.Objects[len(ns.Objects)-1]
		o.Findings = append(o.Findings, f)
	}
	for i := len(v1alpha1.Severities) - 1; i >= 0; i-- {
		if n := sev[v1alpha1.Severities[i]]; n > 0 {
			out.Severities = append(out.Severities, count{Name: string(v1alpha1.Severities[i]), N: n})
		}
	}
	return out
}

// token is s as it may stand in an id (a code, a severity): its letters,
// digits and dashes.
var nonToken = regexp.MustCompile(`[^a-z0-9-]+`)

func token(s string) string { return nonToken.ReplaceAllString(strings.ToLower(s), "_") }

// objectName is an object's name in its namespace's list: Kind/name.
func objectName(r v1alpha1.ObjectRef) string { return fmt.Sprintf("%s/%s", r.Kind, r.Name) }
