package cmd

import (
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// verifiedMinors are the Kubernetes minors make test-versions runs the
// fidelity tests on, with the patch of each test bed: kubectl ssa applies
// each minor's own defaults (pkg/defaults.BuiltinFor).
var verifiedMinors = map[int]string{34: "v1.34.4", 35: "v1.35.4", 36: "v1.36.3", 37: "v1.37.1"}

// knownDifferences are what the embedded field manager does otherwise
// than a server of a minor (and patches below fixedIn, when set).
var knownDifferences = []struct {
	minor   int
	fixedIn int // the first patch without the difference; 0: every patch
	note    string
}{
	// None now. structured-merge-diff v6.3.2 (Kubernetes 1.36.0-1.36.2)
	// keeps a container an apply's pruning empties where v6.3.3 (1.36.3)
	// and the embedded v6.4.2 remove it. Measured on a 1.36.1 apiserver
	// (e2e TestEmptiedContainerAfterApply): it shows only where the
	// manifest sets a map as {} whose fields the applier set before (a
	// custom resource's map, map of maps' element, struct or keyed item's
	// map; a container's securityContext or capabilities), and it is
	// predicted there (conflict.KeepsEmptiedMaps). Dropping the map, a
	// set list applied as [], and a built-in's omitempty map (a
	// ConfigMap's data, a nodeSelector) come out as on 1.37. 1.34 and 1.35
	// run v6.3.0, whose apply differs from v6.4.2 only in extraction,
	// which the server does not do.
}

// oldestTestable is the oldest minor a test bed builds here: the module
// proxy refuses k8s.io/kubernetes before 1.34.
const oldestTestable = 34

// serverSupport tells how faithful predictions are for the server's
// version, with the notes that say why when they are not exact.
func serverSupport(server *apimachineryversion.Info, engine string) (v1alpha1.ServerSupport, []string) {
	v, err := utilversion.ParseGeneric(server.GitVersion)
	if err != nil || v.Major() != 1 {
		return v1alpha1.ServerUntested, []string{"the server's version " + server.GitVersion + " is not a Kubernetes version"}
	}
	minor := int(v.Minor())
	var notes []string
	for _, d := range knownDifferences {
		if d.minor == minor && (d.fixedIn == 0 || int(v.Patch()) < d.fixedIn) {
			notes = append(notes, d.note)
		}
	}
	_, ok := verifiedMinors[minor]
	switch {
	case !ok && minor < oldestTestable:
		notes = append(notes, fmt.Sprintf("Kubernetes 1.%d is not verified here (no test bed of it can be built; 1.%d-%s are): defaults and field-manager behaviour of that release may differ", minor, oldestTestable, engine))
		return v1alpha1.ServerUntested, notes
	case !ok:
		notes = append(notes, fmt.Sprintf("Kubernetes 1.%d is newer or untested (verified: %s)", minor, verifiedList()))
		return v1alpha1.ServerUntested, notes
	case len(notes) > 0:
		return v1alpha1.ServerDiffers, notes
	}
	return v1alpha1.ServerExact, nil
}

func verifiedList() string {
	var out []string
	for m := oldestTestable; m < 100; m++ {
		if _, ok := verifiedMinors[m]; ok {
			out = append(out, fmt.Sprintf("1.%d", m))
		}
	}
	return strings.Join(out, ", ")
}
