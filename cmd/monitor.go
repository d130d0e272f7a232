package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/monitor"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
)

type monitorOptions struct {
	*globalOptions
	sel          kube.Selection
	bind         string
	leaderElect  bool
	election     monitor.Election
	events       bool
	reports      bool
	minFlips     int
	window       time.Duration
	reportPeriod time.Duration

	// Set by complete.
	args []string
}

func newMonitorCmd(g *globalOptions) *cobra.Command {
	o := &monitorOptions{globalOptions: g, bind: ":8080", events: true, reports: true,
		minFlips: fight.DefaultMinFlips, window: fight.DefaultWindow, reportPeriod: 3 * time.Second,
		election: monitor.Election{Name: "kubectl-ssa-monitor"}}
	cmd := &cobra.Command{
		Use:   "monitor (TYPE[,TYPE...] | --all-kinds) [-l SELECTOR] [-n NAMESPACE | -A] [flags]",
		Short: "Watch a cluster for ownership fights, hand edits and forced takeovers; export metrics, Events and PolicyReports",
		Long: `Run until stopped, watching the selected kinds, and tell what it finds:

- ownership fights (two managers taking a field from each other, as watch
  finds them: --min-flips within --window), hand edits of fields an applier
  owns (kubectl edit, patch, set, and kubectl scale through /scale),
  forced takeovers (an applier taking fields from another with
  --force-conflicts): counters, and a Warning Event on the object
  (OwnershipFight, ManualEdit, ForcedTakeover) with the fix;
- every audit finding (audit's codes, severities and fixes): a gauge of
  open findings, and a wgpolicyk8s.io/v1alpha2 PolicyReport "kubectl-ssa"
  per namespace (a ClusterPolicyReport for cluster-scoped objects).

Only metadata is read (managedFields are metadata), through client-go's
informers: no value, never a Secret's. --metrics-bind-address serves
/metrics (Prometheus), /healthz and /readyz (ready once every kind is
listed, and not while the watches have lost the server). The watches ride
out an apiserver restart and an expired resourceVersion (410) by listing
again. In a cluster it uses the pod's service account; with
--leader-elect, replicas elect one on a Lease. SIGTERM or Ctrl-C stop it
(exit 0), releasing the lease.`,
		Example: `  # Every Deployment and StatefulSet of the cluster
  kubectl ssa monitor deployments,statefulsets -A

  # Everything in one namespace, metrics on another port
  kubectl ssa monitor --all-kinds -n shop --metrics-bind-address 127.0.0.1:9090

  # As a Deployment of two replicas: one monitors, the other waits
  kubectl ssa monitor --all-kinds -A --leader-elect`,
		ValidArgsFunction: completeResources(g),
		RunE:              runE(o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.sel.LabelSelector, "selector", "l", "", "Label selector, as kubectl's (-l app=web,tier!=db).")
	f.BoolVarP(&o.sel.AllNamespaces, "all-namespaces", "A", false, "Watch objects in all namespaces.")
	f.BoolVar(&o.sel.AllKinds, "all-kinds", false, "Every kind the server lists and watches, found through discovery.")
	f.StringVar(&o.bind, "metrics-bind-address", o.bind, "Address to serve /metrics, /healthz and /readyz on.")
	f.BoolVar(&o.leaderElect, "leader-elect", false, "Monitor only while holding a Lease, so that one of several replicas monitors.")
	f.StringVar(&o.election.Namespace, "leader-elect-namespace", "", "Namespace of the Lease (default: the pod's namespace, else default).")
	f.StringVar(&o.election.Name, "leader-elect-id", o.election.Name, "Name of the Lease.")
	f.BoolVar(&o.events, "events", o.events, "Record a Warning Event on an object for each fight, hand edit and forced takeover.")
	f.BoolVar(&o.reports, "policy-reports", o.reports, "Write the findings as wgpolicyk8s.io/v1alpha2 PolicyReports (the CRD must be installed).")
	f.IntVar(&o.minFlips, "min-flips", o.minFlips, "How many flips of a field within --window make a fight (at least 2).")
	f.DurationVar(&o.window, "window", o.window, "How far back flips count; fights and takeovers stay in the reports this long.")
	f.DurationVar(&o.reportPeriod, "policy-report-period", o.reportPeriod, "At most one write of a namespace's PolicyReport per period.")
	_ = f.MarkHidden("policy-report-period")
	return cmd
}

func (o *monitorOptions) complete(_ *cobra.Command, args []string) error {
	o.args = args
	if o.election.Namespace == "" {
		o.election.Namespace = monitor.PodNamespace()
	}
	return nil
}

func (o *monitorOptions) validate() error {
	switch {
	case o.minFlips < 2:
		return fmt.Errorf("--min-flips must be at least 2, not %d: one flip is a handover", o.minFlips)
	case o.window <= 0:
		return errors.New("--window must be a positive duration, e.g. 5m")
	case o.reportPeriod <= 0:
		return errors.New("--policy-report-period must be a positive duration, e.g. 3s")
	case o.leaderElect && o.election.Name == "":
		return errors.New("--leader-elect-id must name the Lease")
	case o.sel.AllKinds && len(o.args) > 0:
		return errors.New("--all-kinds selects every kind: drop the TYPE arguments")
	case !o.sel.AllKinds && len(o.args) == 0:
		return errors.New("name the kinds to monitor: TYPE[,TYPE...] or --all-kinds (see --help)")
	case len(o.args) > 1 || strings.Contains(strings.Join(o.args, ""), "/"):
		return errors.New("monitor watches whole kinds: give TYPE[,TYPE...] (with -l to narrow), not objects by name")
	}
	if _, err := labels.Parse(o.sel.LabelSelector); err != nil {
		return fmt.Errorf("-l %q is not a label selector: %w (write it as kubectl's: -l app=web,tier!=db)", o.sel.LabelSelector, err)
	}
	return nil
}

func (o *monitorOptions) run(ctx context.Context) error {
	return o.serve(ctx)
}
