package cmd

import (
	"fmt"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The names explain-conflict's and diff's exit 4 gives the objects whose
// prediction is not exact (exit.go decides the code).

// notExactName names an object whose prediction is not exact, with the
// first reason (admission not evaluated here, validation not modelled):
// ok is false when it is exact.
func notExactName(o v1alpha1.ObjectRef, a *v1alpha1.AdmissionReport, unchecked []string) (string, bool) {
	switch {
	case a != nil && !a.Exact:
		return notExact(o, a), true
	case len(unchecked) > 0:
		return ownership.ObjectName(o.Kind, o.Namespace, o.Name) + " (" + unchecked[0] + ")", true
	}
	return "", false
}

// notExact names an object and the first reason its admission is not
// known here (a matching policy or webhook that may deny or change it, a
// built-in plugin, a list that could not be read).
func notExact(o v1alpha1.ObjectRef, a *v1alpha1.AdmissionReport) string {
	name := ownership.ObjectName(o.Kind, o.Namespace, o.Name)
	if len(a.Reasons) == 0 {
		return name
	}
	more := ""
	if len(a.Reasons) > 1 {
		more = fmt.Sprintf(", and %d more", len(a.Reasons)-1)
	}
	return fmt.Sprintf("%s (%s%s)", name, a.Reasons[0], more)
}
