package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Writer is one side of a fight: a manager and the value it writes.
type Writer struct {
	Owner
	Value any `json:"value"`
}

// Fight is a path fought over, as it stands.
type Fight struct {
	TypeMeta
	Object ObjectRef     `json:"object"`
	Path   pathlang.Path `json:"path"`
	// Managers are the writers, in the order they first took the path.
	Managers []Writer `json:"managers"`
	// Values are the distinct values written, in the order first seen.
	Values []any `json:"values"`
	// Flips is the number of changes of owner and value within the
	// window; Since is the first of them and Last the latest.
	Flips int         `json:"flips"`
	Since metav1.Time `json:"since"`
	Last  metav1.Time `json:"last"`
	// PerMinute is the rate of flips over the window.
	PerMinute float64 `json:"perMinute"`
}
