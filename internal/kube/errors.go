package kube

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
)

// PartialError says that some selected objects were found and others were
// not: the command shows what exists, then fails with this.
type PartialError struct{ Err error }

func (e *PartialError) Error() string { return e.Err.Error() }

func (e *PartialError) Unwrap() error { return e.Err }

// rbacRefusal is the apiserver's RBAC refusal: `User "u" cannot VERB
// resource "R" in API group "G"` and, when namespaced, `in the
// namespace "NS"`.
var rbacRefusal = regexp.MustCompile(`cannot (\w+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?`)

// Friendly rewrites the errors people hit most into one line that says
// what to do next. The commands it suggests carry no connection flags:
// Cluster.Friendly's do.
func Friendly(err error) error { return friendly(err, nil, nil) }

// Friendly is Friendly with the user's connection flags in the commands
// it suggests, and a not-found error of a cluster-scoped kind that does
// not ask for a namespace.
func (c *Cluster) Friendly(err error) error {
	return friendly(err, c.CommandFlags, scopeOf(c.Mapper))
}

// scopeOf tells, through mapper, whether a resource is namespaced (and
// whether that is known).
func scopeOf(mapper meta.RESTMapper) func(schema.GroupResource) (bool, bool) {
	return func(gr schema.GroupResource) (bool, bool) {
		if mapper == nil {
			return false, false
		}
		gvk, err := mapper.KindFor(gr.WithVersion(""))
		if err != nil {
			return false, false
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
}

func friendly(err error, flags []string, namespaced func(schema.GroupResource) (bool, bool)) error {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		errs := make([]error, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			errs = append(errs, friendly(e, flags, namespaced))
		}
		return &joinedError{errs: errs}
	}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err) && strings.Contains(err.Error(), ": check the name"):
		// Made friendly already (read, then wrapped by the caller).
		return err
	case apierrors.IsNotFound(err):
		if errors.As(err, &status) && status.Status().Details != nil && namespaced != nil {
			d := status.Status().Details
			if ns, known := namespaced(schema.GroupResource{Group: d.Group, Resource: d.Kind}); known && !ns {
				return fmt.Errorf("%w: check the name", err)
			}
		}
		return fmt.Errorf("%w: check the name and the namespace (-n)", err)
	case apierrors.IsForbidden(err):
		if m := rbacRefusal.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%w: this needs %s permission (check with %s), or use another --context/--as", err, m[1], CanI(m[1], schema.GroupResource{Group: m[3], Resource: m[2]}, m[4], flags))
		}
		return fmt.Errorf("%w: check your permissions with kubectl auth can-i --list, or use another --context/--as", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: the credentials were rejected; check --kubeconfig/--context", err)
	case meta.IsNoMatchError(err) || strings.Contains(err.Error(), "doesn't have a resource type"):
		return fmt.Errorf("%w: list the known types with kubectl api-resources", err)
	}
	return err
}

// CanI is the kubectl command that tells whether the user may verb the
// resource (in namespace ns, "" cluster-wide), with the user's
// connection flags, quoted for a shell.
func CanI(verb string, gr schema.GroupResource, ns string, flags []string) string {
	words := []string{"kubectl", "auth", "can-i", verb, gr.String()}
	if ns != "" {
		words = append(words, "-n", ns)
	}
	words = append(words, flags...)
	for i, w := range words {
		words[i] = shell.Quote(w)
	}
	return strings.Join(words, " ")
}

// joinedError is several errors on one line, separated by "; "; errors.Is
// and errors.As see each.
type joinedError struct{ errs []error }

func (e *joinedError) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e *joinedError) Unwrap() []error { return e.errs }
