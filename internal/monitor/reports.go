package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// The reports, wgpolicyk8s.io/v1alpha2 (what Policy Reporter, Kyverno's
// UI and the OpenReports tools read): a PolicyReport per namespace and a
// ClusterPolicyReport for cluster-scoped objects, each named ReportName.
var (
	PolicyReports        = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	ClusterPolicyReports = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
)

const (
	ReportName   = "kubectl-ssa"
	ReportSource = "kubectl-ssa"
	// maxResults keeps a report well under the size of an object etcd
	// takes; the summary counts them all.
	maxResults = 2000
)

// report is one namespace's report, read under the lock, written after.
type report struct {
	namespace string
	results   []map[string]any
	summary   map[string]any
}

// report gathers the results of the objects of a namespace, in a stable
// order: by kind, name, policy, manager.
func (m *Monitor) report(ns string) report {
	type row struct {
		ref v1alpha1.ObjectRef
		r   result
	}
	var rows []row
	for _, st := range m.objects {
		if st.ref.Namespace != ns {
			continue
		}
		for _, r := range append(append([]result{}, st.audit...), st.recent...) {
			rows = append(rows, row{st.ref, r})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.ref.Kind != b.ref.Kind {
			return a.ref.Kind < b.ref.Kind
		}
		if a.ref.Name != b.ref.Name {
			return a.ref.Name < b.ref.Name
		}
		return a.r.key() < b.r.key()
	})
	counts := map[string]int64{"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
	out := report{namespace: ns, results: []map[string]any{}}
	for _, row := range rows {
		verdict, severity := verdictOf(row.r.severity)
		counts[verdict]++
		if len(out.results) == maxResults {
			continue
		}
		res := map[string]any{
			"source": ReportSource, "policy": row.r.policy, "result": verdict, "severity": severity,
			"category": "Server-Side Apply", "scored": true, "message": row.r.message,
			"timestamp": map[string]any{"seconds": row.r.at.Unix(), "nanos": int64(0)},
			"resources": []any{map[string]any{"apiVersion": row.ref.APIVersion, "kind": row.ref.Kind,
				"namespace": row.ref.Namespace, "name": row.ref.Name, "uid": row.ref.UID}},
			"properties": map[string]any{"manager": row.r.manager, "fix": row.r.fix},
		}
		if row.ref.Namespace == "" {
			delete(res["resources"].([]any)[0].(map[string]any), "namespace")
		}
		out.results = append(out.results, res)
	}
	out.summary = map[string]any{}
	for k, v := range counts {
		out.summary[k] = v
	}
	return out
}

// verdictOf maps a severity to a report's result and severity.
func verdictOf(s v1alpha1.Severity) (verdict, severity string) {
	switch s {
	case v1alpha1.SeverityError:
		return "fail", "high"
	case v1alpha1.SeverityWarning:
		return "warn", "medium"
	}
	return "warn", "info"
}

// write applies the report with the monitor's own field manager: the
// results it writes are all of them, so a result gone is removed.
func (r report) write(ctx context.Context, client dynamic.Interface) error {
	kind, res := "PolicyReport", client.Resource(PolicyReports).Namespace(r.namespace)
	if r.namespace == "" {
		kind, res = "ClusterPolicyReport", client.Resource(ClusterPolicyReports)
	}
	meta := map[string]any{"name": ReportName, "labels": map[string]any{"app.kubernetes.io/managed-by": ReportSource}}
	if r.namespace != "" {
		meta["namespace"] = r.namespace
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PolicyReports.GroupVersion().String(), "kind": kind, "metadata": meta,
		"summary": r.summary, "results": toAny(r.results),
	}}
	if _, err := res.Apply(ctx, ReportName, u, metav1.ApplyOptions{FieldManager: Component, Force: true}); err != nil {
		where := "cluster"
		if r.namespace != "" {
			where = "namespace " + r.namespace
		}
		return fmt.Errorf("writing the %s %s of %s: %w", kind, ReportName, where, err)
	}
	return nil
}

func toAny(rs []map[string]any) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// retry tells whether a report that could not be written is to be
// written again at the next tick: not when its namespace is gone or
// going, nor when the server refuses it (no CRD, no right).
func retry(err error) bool {
	return !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) && !apierrors.IsMethodNotSupported(err)
}

// missingCRD tells a report refused for want of its resource (the CRD
// not installed) from one refused for want of its namespace.
func missingCRD(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Kind != "namespaces"
}

// stale marks for writing the reports an earlier run left (their
// findings may be gone since): each is written again, emptied if need be.
func (m *Monitor) stale(ctx context.Context) {
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + ReportSource, FieldSelector: "metadata.name=" + ReportName}
	var lists []dynamic.ResourceInterface
	if slices.ContainsFunc(m.cfg.Kinds, func(k kube.Resource) bool { return k.Namespaced }) {
		lists = append(lists, m.cfg.Reports.Resource(PolicyReports).Namespace(m.cfg.Namespace))
	}
	if slices.ContainsFunc(m.cfg.Kinds, func(k kube.Resource) bool { return !k.Namespaced }) {
		lists = append(lists, m.cfg.Reports.Resource(ClusterPolicyReports))
	}
	for _, l := range lists {
		got, err := l.List(ctx, sel)
		if apierrors.IsNotFound(err) {
			continue // no CRD: said once where reports are written
		}
		if err != nil {
			m.cfg.Log(fmt.Sprintf("listing the reports of an earlier run: %v", err))
			continue
		}
		m.mu.Lock()
		for _, r := range got.Items {
			m.dirty[r.GetNamespace()] = true
		}
		m.mu.Unlock()
	}
}
