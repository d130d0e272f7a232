package audit

import (
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// NewReport sorts the findings and summarizes them.
func NewReport(clusters []string, scanned int, findings []v1alpha1.Finding, unlisted []string) *v1alpha1.AuditReport {
	if findings == nil {
		findings = []v1alpha1.Finding{}
	}
	if unlisted == nil {
		unlisted = []string{}
	}
	sort.SliceStable(findings, func(i, j int) bool { return less(findings[i], findings[j]) })
	r := &v1alpha1.AuditReport{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.AuditReportKind), Clusters: clusters, Scanned: scanned, Findings: findings, Unlisted: unlisted}
	r.Summary = summarize(findings)
	return r
}

func objectKey(f v1alpha1.Finding) string {
	return f.Cluster + "\x00" + f.Object.UID + "\x00" + f.Object.Namespace + "\x00" + f.Object.Kind + "\x00" + f.Object.Name
}

func summarize(findings []v1alpha1.Finding) v1alpha1.AuditSummary {
	s := v1alpha1.AuditSummary{Codes: []v1alpha1.CodeCount{}, Managers: []v1alpha1.ManagerCount{}}
	type agg struct {
		n       int
		objects map[string]bool
		codes   map[v1alpha1.Code]bool
	}
	byCode, byManager := map[v1alpha1.Code]*agg{}, map[string]*agg{}
	get := func(m map[string]*agg, k string) *agg {
		if m[k] == nil {
			m[k] = &agg{objects: map[string]bool{}, codes: map[v1alpha1.Code]bool{}}
		}
		return m[k]
	}
	for _, f := range findings {
		a := byCode[f.Code]
		if a == nil {
			a = &agg{objects: map[string]bool{}}
			byCode[f.Code] = a
		}
		a.n++
		a.objects[objectKey(f)] = true
		// Every co-owner of shared fields is part of the finding.
		for _, name := range append([]string{f.Manager}, f.SharedWith...) {
			if name == "" {
				continue
			}
			m := get(byManager, name)
			m.n++
			m.objects[objectKey(f)] = true
			m.codes[f.Code] = true
		}
	}
	for _, c := range Codes {
		if a := byCode[c]; a != nil {
			s.Codes = append(s.Codes, v1alpha1.CodeCount{Code: c, Severity: SeverityOf(c), Findings: a.n, Objects: len(a.objects)})
		}
	}
	for name, a := range byManager {
		mc := v1alpha1.ManagerCount{Manager: name, Findings: a.n, Objects: len(a.objects), Codes: []v1alpha1.Code{}}
		for _, c := range Codes {
			if a.codes[c] {
				mc.Codes = append(mc.Codes, c)
			}
		}
		s.Managers = append(s.Managers, mc)
	}
	sort.Slice(s.Managers, func(i, j int) bool {
		a, b := s.Managers[i], s.Managers[j]
		if a.Findings != b.Findings {
			return a.Findings > b.Findings
		}
		return a.Manager < b.Manager
	})
	return s
}

func less(a, b v1alpha1.Finding) bool {
	ka := []string{a.Cluster, a.Object.Namespace, a.Object.Kind, a.Object.APIVersion, a.Object.Name}
	kb := []string{b.Cluster, b.Object.Namespace, b.Object.Kind, b.Object.APIVersion, b.Object.Name}
	if c := slices.Compare(ka, kb); c != 0 {
		return c < 0
	}
	if ia, ib := slices.Index(Codes, a.Code), slices.Index(Codes, b.Code); ia != ib {
		return ia < ib
	}
	return strings.Join([]string{a.Manager, string(a.Operation), string(a.Subresource)}, "\x00") < strings.Join([]string{b.Manager, string(b.Operation), string(b.Subresource)}, "\x00")
}
