package monitor

import (
	"context"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election is where replicas elect the one that monitors: a Lease.
type Election struct {
	Namespace, Name string
}

// serviceAccountNamespace is where a pod's namespace is mounted.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// PodNamespace is the namespace the process runs in as a pod, else
// "default".
func PodNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return metav1.NamespaceDefault
}

// Elect runs work while this replica holds the lease, as client-go's
// leader election does for the controllers: it waits for the lease,
// works, and releases it when ctx ends (a SIGTERM: the next replica takes
// over at once). Losing the lease to another replica is ErrLostLease:
// the process ends and is started again, as a controller's is.
func Elect(ctx context.Context, client coordinationv1client.LeasesGetter, e Election, log func(string), work func(context.Context) error) error {
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
			Client: client, LockConfig: resourcelock.ResourceLockConfig{Identity: id}},
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ReleaseOnCancel: true, Name: e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) { leading <- lctx },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return err
	}
	log("waiting for the lease " + e.Namespace + "/" + e.Name + " as " + id)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		le.Run(gctx)
		if ctx.Err() == nil && gctx.Err() == nil {
			return ErrLostLease
		}
		return nil
	})
	g.Go(func() error {
		select {
		case lctx := <-leading:
			log("holding the lease " + e.Namespace + "/" + e.Name)
			return work(lctx)
		case <-gctx.Done():
			return nil
		}
	})
	return g.Wait()
}
