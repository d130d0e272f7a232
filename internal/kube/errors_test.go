package kube

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// A refusal names the command that checks it, whole, with the user's
// connection flags; a cluster-scoped not-found asks for no namespace.
func TestFriendly(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
		errString(`User "reader" cannot patch resource "deployments" in API group "apps" in the namespace "shop"`))
	got := friendly(forbidden, []string{"--as=reader", "--context=prod"}, nil).Error()
	if !strings.Contains(got, "check with kubectl auth can-i patch deployments.apps -n shop --as=reader --context=prod)") {
		t.Errorf("%s", got)
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "networking.k8s.io", Resource: "ipaddresses"}, "10.0.0.9")
	clusterScoped := func(schema.GroupResource) (bool, bool) { return false, true }
	if got := friendly(notFound, nil, clusterScoped).Error(); !strings.HasSuffix(got, "not found: check the name") {
		t.Errorf("%s", got)
	}
	if got := Friendly(notFound).Error(); !strings.HasSuffix(got, "check the name and the namespace (-n)") {
		t.Errorf("%s", got)
	}
	if got := Friendly(apierrors.NewUnauthorized("Unauthorized")).Error(); got != "Unauthorized: the credentials were rejected; check --kubeconfig/--context" {
		t.Errorf("%s", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestFriendlyAggregateWraps: the errors of an aggregate are told on one
// line, and each is still there for errors.Is.
func TestFriendlyAggregateWraps(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	err := friendly(utilerrors.NewAggregate([]error{first, second}), nil, nil)
	if err.Error() != "first; second" {
		t.Errorf("got %q", err)
	}
	if !errors.Is(err, first) || !errors.Is(err, second) {
		t.Errorf("%v does not wrap its errors", err)
	}
}

// An error made friendly, wrapped, and made friendly again says its hint
// once (issue 36).
func TestFriendlyOnce(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "nope")
	got := Friendly(fmt.Errorf("configmap/nope: %w", Friendly(notFound))).Error()
	if strings.Count(got, "check the name") != 1 {
		t.Errorf("%s", got)
	}
}
