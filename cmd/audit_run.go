package cmd

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func (o *auditOptions) run(ctx context.Context) error {
	targets, err := kube.Targets(o.configFlags, o.allContexts, o.clusterFlags)
	if err != nil {
		return err
	}
	o.sel.In = o.streams.In
	clusters := make([]audit.Cluster, len(targets))
	for i, t := range targets {
		clusters[i] = audit.Cluster{Name: t.Name, ClusterFlags: t.CommandFlags, Connect: func() (audit.Lister, error) { return o.lister(t.Flags, t.CommandFlags, o.args) }}
	}
	var progress audit.Progress
	line := startProgress(o.streams.ErrOut, o.output.isData(), func() string {
		return fmt.Sprintf("%d objects scanned, %d findings", progress.Scanned.Load(), progress.Found.Load())
	})
	rep, failed := audit.Run(ctx, clusters, audit.Options{Expect: o.expect, Allow: o.allow, LastAppliedThreshold: o.threshold, Fix: v1alpha1.FixMode(o.fix), Rules: o.ruleSet}, &progress)
	line.done()
	if stop := stopped(ctx, "audit stopped after %d objects scanned (%d findings so far): no report, a partial audit is not one; run it again", progress.Scanned.Load(), progress.Found.Load()); stop != nil {
		return stop
	}
	if len(failed) == len(targets) {
		return errors.Join(failed...)
	}
	o.clusters, o.failed = len(targets), failed
	if err := printAll(o.printer, []*v1alpha1.AuditReport{rep}, false); err != nil {
		return err
	}
	for i, u := range rep.Unlisted {
		if i == maxUnlistedLines && len(rep.Unlisted) > maxUnlistedLines+1 {
			render.Warning(o.streams.ErrOut, fmt.Sprintf("not audited: %d more kinds (-o json lists them in unlisted)", len(rep.Unlisted)-i))
			break
		}
		render.Warning(o.streams.ErrOut, "not audited: "+u)
	}
	if nothingAudited(rep) {
		// A gate that could read nothing must not pass.
		return fmt.Errorf("nothing was audited: %d kinds could not be listed (see the warnings): audit with list rights, or name the kinds and namespaces you may list", len(rep.Unlisted))
	}
	if len(rep.Unlisted) > 0 && !o.allowPartial {
		// A gate must not pass on kinds it did not read.
		return fmt.Errorf("the audit is partial: %d kinds could not be listed (see the warnings): audit with list rights, name the kinds you may list, or accept it with --allow-partial", len(rep.Unlisted))
	}
	for _, e := range failed {
		render.Error(o.streams.ErrOut, e)
	}
	return exitWith(auditCode(rep, len(failed), v1alpha1.Severity(o.failOn)))
}

// maxUnlistedLines is how many kinds that could not be listed are named
// one by one on stderr.
const maxUnlistedLines = 10

// clusterLister is audit's view of one cluster: its objects' metadata,
// streamed, and the versions it serves.
type clusterLister struct {
	o    *auditOptions
	c    *kube.Cluster
	args []string
}

// lister connects to the cluster flags reach.
func (o *auditOptions) lister(flags *genericclioptions.ConfigFlags, commandFlags, args []string) (audit.Lister, error) {
	c, err := kube.New(flags, kube.Options{QuietWarnings: true, CommandFlags: commandFlags})
	if err != nil {
		return nil, err
	}
	// Which versions are served decides unserved-apiversion: read it fresh.
	c.Refresh()
	if err := c.CheckServer(); err != nil {
		return nil, err
	}
	return clusterLister{o: o, c: c, args: args}, nil
}

func (l clusterLister) Served(gvk schema.GroupVersionKind) bool { return l.c.ServedKind(gvk) }

func (l clusterLister) List(ctx context.Context, each func(audit.Object)) ([]string, error) {
	return l.o.sel.Stream(ctx, l.c, l.args, kube.StreamOptions{Concurrency: l.o.concurrency}, func(it kube.Item) error {
		each(audit.ObjectOf(it.Resource.GVR.GroupVersion().String(), it.Resource.Kind, it.Meta))
		return nil
	})
}
