package kube

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// PartialError says that some selected objects were found and others were
// not: the command shows what exists, then fails with this.
type PartialError struct{ Err error }

func (e *PartialError) Error() string { return e.Err.Error() }

func (e *PartialError) Unwrap() error { return e.Err }

var refusedVerb = regexp.MustCompile(`cannot (\w+) resource`)

// Friendly rewrites the errors people hit most into one line that says
// what to do next.
func Friendly(err error) error {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		msgs := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			msgs = append(msgs, Friendly(e).Error())
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: check the name and the namespace (-n)", err)
	case apierrors.IsForbidden(err):
		verb := "get"
		if m := refusedVerb.FindStringSubmatch(err.Error()); m != nil {
			verb = m[1]
		}
		return fmt.Errorf("%w: this needs %s permission (check with kubectl auth can-i %s ...), or use another --context/--as", err, verb, verb)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: the credentials were refused; check --kubeconfig/--context", err)
	case meta.IsNoMatchError(err) || strings.Contains(err.Error(), "doesn't have a resource type"):
		return fmt.Errorf("%w: list the known types with kubectl api-resources", err)
	}
	return err
}
