package audit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// Lister reads one cluster's objects.
type Lister interface {
	// List calls each with every object to audit, one call at a time,
	// and returns the kinds it could not list.
	List(ctx context.Context, each func(Object)) (unlisted []string, err error)
	// Served tells whether the cluster serves a kind at a version.
	Served(schema.GroupVersionKind) bool
}

// Cluster is one cluster to audit.
type Cluster struct {
	// Name names it in findings and messages (its kubeconfig context).
	Name string
	// ClusterFlags are the connection flags its fix commands repeat.
	ClusterFlags []string
	// Connect makes its Lister.
	Connect func() (Lister, error)
}

// Progress counts, as the clusters are read, the objects scanned and the
// findings found; it may be read while Run runs.
type Progress struct {
	Scanned, Found atomic.Int64
}

// Run audits the clusters side by side with the checks of o (its
// Cluster, ClusterFlags and Served are each cluster's own). The report
// holds what every cluster that could be read gave; failed has an error
// per cluster that could not be, prefixed with its name when there are
// several. Stopped (ctx cancelled), failed is ctx's error alone, not one
// per cluster it cut off. A nil progress counts nothing.
func Run(ctx context.Context, clusters []Cluster, o Options, progress *Progress) (rep *v1alpha1.AuditReport, failed []error) {
	if progress == nil {
		progress = &Progress{}
	}
	prefix := func(name, msg string) string {
		if len(clusters) > 1 {
			return "context " + name + ": " + msg
		}
		return msg
	}
	prefixErr := func(name string, err error) error {
		if len(clusters) > 1 {
			return fmt.Errorf("context %s: %w", name, err)
		}
		return err
	}
	var (
		mu       sync.Mutex
		findings []v1alpha1.Finding
		unlisted []string
		g        errgroup.Group
	)
	for _, c := range clusters {
		// A cluster that fails does not stop the others: its error is
		// kept, not returned to the group.
		g.Go(func() error {
			mine, un, err := scan(ctx, c, o, progress)
			mu.Lock()
			defer mu.Unlock()
			findings = append(findings, mine...)
			for _, u := range un {
				unlisted = append(unlisted, prefix(c.Name, u))
			}
			if err != nil {
				failed = append(failed, prefixErr(c.Name, err))
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		failed = []error{err}
	}
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Name
	}
	return NewReport(names, int(progress.Scanned.Load()), findings, unlisted), failed
}

// scan audits one cluster.
func scan(ctx context.Context, c Cluster, o Options, progress *Progress) ([]v1alpha1.Finding, []string, error) {
	l, err := c.Connect()
	if err != nil {
		return nil, nil, err
	}
	o.Cluster, o.ClusterFlags, o.Served = c.Name, c.ClusterFlags, l.Served
	var mine []v1alpha1.Finding
	un, err := l.List(ctx, func(obj Object) {
		fs := Check(obj, o)
		progress.Scanned.Add(1)
		progress.Found.Add(int64(len(fs)))
		mine = append(mine, fs...)
	})
	return mine, un, err
}
