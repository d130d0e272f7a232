package cmd

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

// watchable keeps the kinds the account may list and watch where they are
// watched: an informer refused its watch lists again and again, and would
// look ready while it sees nothing. Kinds named on the command line must
// all be watchable (one line, exit 2); --all-kinds leaves the others out,
// saying which.
func (o *monitorOptions) watchable(ctx context.Context, cfg *rest.Config, kinds kube.Kinds, log func(string)) (kube.Kinds, error) {
	client, err := authorizationv1client.NewForConfig(cfg)
	if err != nil {
		return kinds, err
	}
	var kept []kube.Resource
	var refused []string
	for _, k := range kinds.Resources {
		ns := ""
		if k.Namespaced {
			ns = kinds.Namespace
		}
		verb, err := refusedVerb(ctx, client, k, ns)
		if err != nil {
			return kinds, err
		}
		if verb == "" {
			kept = append(kept, k)
			continue
		}
		if !o.sel.AllKinds {
			return kinds, fmt.Errorf("may not %s %s: monitoring needs get, list and watch on it (check with %s)",
				verb, k.GVR.GroupResource(), kube.CanI(verb, k.GVR.GroupResource(), ns, o.commandFlags))
		}
		refused = append(refused, k.GVR.GroupResource().String())
	}
	if len(refused) > 0 {
		log(fmt.Sprintf("left out %d kinds it may not list and watch: %s", len(refused), strings.Join(refused, ", ")))
	}
	kinds.Resources = kept
	return kinds, nil
}

// refusedVerb is the first of list and watch the account may not do on k
// in ns ("" cluster-wide), or "".
func refusedVerb(ctx context.Context, client authorizationv1client.SelfSubjectAccessReviewsGetter, k kube.Resource, ns string) (string, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: k.GVR.Group, Version: k.GVR.Version, Resource: k.GVR.Resource}}}
		got, err := client.SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("asking whether it may %s %s: %w", verb, k.GVR.GroupResource(), err)
		}
		if !got.Status.Allowed {
			return verb, nil
		}
	}
	return "", nil
}
