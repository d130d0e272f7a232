package v1alpha1

import (
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// ServerSupport says how faithful predictions are for the server's version.
type ServerSupport string

// How faithful predictions are.
const (
	// ServerExact: a minor the fidelity tests (make test-versions: the
	// explain-conflict and diff corpora against the server's dry run)
	// pass on, with no known difference at the server's patch.
	ServerExact ServerSupport = "exact"
	// ServerDiffers: a minor with known differences, listed in
	// serverNotes.
	ServerDiffers ServerSupport = "differs"
	// ServerUntested: a minor no test bed here runs; apply behaviour may
	// differ (explain-conflict --verify compares a prediction with the
	// server's dry run).
	ServerUntested ServerSupport = "untested"
)

// Version is the output of "kubectl ssa version -o json".
type Version struct {
	TypeMeta
	Version   string            `json:"version"`
	GitCommit string            `json:"gitCommit"`
	BuildDate string            `json:"buildDate"`
	GoVersion string            `json:"goVersion"`
	Platform  string            `json:"platform"`
	Libraries map[string]string `json:"libraries"`
	// EngineKubernetesVersion is the Kubernetes minor ("1.37") whose field
	// manager is embedded.
	EngineKubernetesVersion string `json:"engineKubernetesVersion"`
	// ServerVersion is the server's /version, absent with --client or when
	// the server could not be reached.
	ServerVersion *apimachineryversion.Info `json:"serverVersion,omitempty"`
	ServerSupport ServerSupport             `json:"serverSupport,omitempty"`
	// ServerNotes say why predictions for this server are not exact.
	ServerNotes []string `json:"serverNotes,omitempty"`
}
