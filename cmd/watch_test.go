package cmd

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

func TestWatchStartLine(t *testing.T) {
	deploys := kube.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	tests := []struct {
		name    string
		wo      kube.WatchOptions
		timeout time.Duration
		want    string
	}{
		{"one object", kube.WatchOptions{Resource: deploys, Namespace: "shop", Name: "web"}, 0,
			"Watching deployments.apps/web in namespace shop until interrupted (Ctrl-C) for fights (3 flips within 1m0s); a line is printed when one starts."},
		{"everywhere, with a timeout", kube.WatchOptions{Resource: deploys, LabelSelector: "team=pay"}, 2 * time.Minute,
			"Watching deployments.apps (team=pay) in all namespaces for 2m0s for fights (3 flips within 1m0s); a line is printed when one starts."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := watchStartLine(tt.wo, 3, time.Minute, tt.timeout); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
