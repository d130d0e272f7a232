// Command populate creates many ConfigMaps fast for bench/monitor.sh, as
// kubectl create would (field manager kubectl-create), and labels some as
// kubectl label would (field manager kubectl-label: a hand edit of a
// field audit's manual-edit reports), 32 requests at a time, no client
// rate limit.
//
//	populate -n bench -from 0 -to 5000              # o-000000 .. o-004999
//	populate -n bench -from 0 -to 5000 -edit 100    # label every 100th
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "populate: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	ns := flag.String("n", "bench", "namespace")
	from := flag.Int("from", 0, "first object number")
	to := flag.Int("to", 0, "one past the last object number")
	edit := flag.Int("edit", 0, "label every EDIT-th object of the range instead of creating them")
	flag.Parse()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cms := cs.CoreV1().ConfigMaps(*ns)
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(32)
	step := 1
	if *edit > 0 {
		step = *edit
	}
	for i := *from; i < *to; i += step {
		name := fmt.Sprintf("o-%06d", i)
		g.Go(func() error {
			if *edit > 0 {
				_, err := cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"edited":"by-hand"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"})
				return err
			}
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
				Data:       map[string]string{"key": fmt.Sprintf("value-%d", i)},
			}
			_, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "kubectl-create"})
			return err
		})
	}
	return g.Wait()
}
