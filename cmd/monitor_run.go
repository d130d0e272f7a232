package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/monitor"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// serve connects, listens, and monitors until ctx ends (or the lease is
// lost): the HTTP server and the monitor run side by side.
func (o *monitorOptions) serve(ctx context.Context) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	if err := c.CheckServer(); err != nil {
		return err
	}
	kinds, _, err := o.sel.Kinds(ctx, c, o.args, []string{"watch"})
	if err != nil {
		return err
	}
	if o.sel.AllKinds {
		kinds.Resources = slices.DeleteFunc(kinds.Resources, isEvents)
	}
	log := o.logger()
	if kinds, err = o.watchable(ctx, c.Config, kinds, log); err != nil {
		return err
	}
	if len(kinds.Resources) == 0 {
		return errors.New("no kind to monitor: the server lists none that this account may list and watch")
	}
	// The typed clients of the two groups it writes, not a whole
	// clientset: the binary links what it calls.
	core, err := corev1client.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	leases, err := coordinationv1client.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.bind)
	if err != nil {
		return fmt.Errorf("--metrics-bind-address %s: %w (give a free HOST:PORT or :PORT, e.g. :9090)", o.bind, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := monitor.NewMetrics(reg)
	var current atomic.Pointer[monitor.Monitor]
	srv := &http.Server{Handler: o.mux(reg, &current), ReadHeaderTimeout: 10 * time.Second}
	log(fmt.Sprintf("monitoring %s; /metrics, /healthz and /readyz on %s", describeKinds(kinds), ln.Addr()))

	work := func(ctx context.Context) error {
		cfg := o.config(c, kinds, log)
		if o.events {
			rec, stop := monitor.Recorder(ctx, core)
			defer stop()
			cfg.Events = rec
		}
		m, err := monitor.New(c.Metadata, cfg, metrics)
		if err != nil {
			return err
		}
		current.Store(m)
		defer current.Store(nil)
		return m.Run(ctx)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	g.Go(func() error {
		defer func() { _ = srv.Close() }()
		if o.leaderElect {
			return monitor.Elect(gctx, leases, o.election, log, work)
		}
		return work(gctx)
	})
	err = g.Wait()
	log("stopped")
	return err
}

// isEvents: --all-kinds leaves Events out. Nobody applies them, and
// they are the busiest kind of a cluster (the monitor's own among them).
func isEvents(r kube.Resource) bool {
	return r.GVR.Resource == "events" && (r.GVR.Group == "" || r.GVR.Group == "events.k8s.io")
}

// config is the monitor's Config from the flags.
func (o *monitorOptions) config(c *kube.Cluster, kinds kube.Kinds, log func(string)) monitor.Config {
	cfg := monitor.Config{Kinds: kinds.Resources, Namespace: kinds.Namespace, LabelSelector: o.sel.LabelSelector,
		Fight:       fight.Options{MinFlips: o.minFlips, Window: o.window},
		Audit:       audit.Options{LastAppliedThreshold: audit.DefaultLastAppliedThreshold, Served: c.ServedKind, ClusterFlags: o.commandFlags},
		ReportEvery: o.reportPeriod, Log: log,
		Probe: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return c.Discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
		},
	}
	if o.reports {
		cfg.Reports = c.Dynamic
	}
	return cfg
}

// mux serves /metrics, /healthz and /readyz. A replica waiting for the
// lease is ready: it is where it should be.
func (o *monitorOptions) mux(reg *prometheus.Registry, current *atomic.Pointer[monitor.Monitor]) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		m := current.Load()
		switch {
		case m == nil && o.leaderElect:
			fmt.Fprintln(w, "ok: waiting for the lease")
		case m == nil:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		default:
			if err := m.Ready(r.Context()); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		}
	})
	return mux
}

// logger writes a timestamped line to standard error, one at a time.
func (o *monitorOptions) logger() func(string) {
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(o.streams.ErrOut, time.Now().UTC().Format(time.RFC3339)+" "+render.Escape(msg))
	}
}

// describeKinds says what is watched, for the first line.
func describeKinds(k kube.Kinds) string {
	where := "in all namespaces"
	if k.Namespace != "" {
		where = "in namespace " + k.Namespace
	}
	if !slices.ContainsFunc(k.Resources, func(r kube.Resource) bool { return r.Namespaced }) {
		where = "(cluster-scoped)"
	}
	if len(k.Resources) == 1 {
		return k.Resources[0].GVR.GroupResource().String() + " " + where
	}
	return fmt.Sprintf("%d kinds %s", len(k.Resources), where)
}
