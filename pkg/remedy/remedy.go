// Package remedy is how every report carries its suggested fixes: as data
// (a summary and the command as words), built from one Target (the object,
// how the user reached the cluster, where the manifests came from, the
// field manager), so that every command kubectl-ssa suggests pastes as is
// with the same context, namespace and input flags. Views only quote and
// colour them.
package remedy

import (
	"encoding/json"

	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Command is a command line as words. It marshals to one string, quoted
// for a shell so that it can be pasted.
type Command []string

// String is the pasteable command.
func (c Command) String() string { return shell.Join(c) }

// MarshalJSON writes the pasteable string.
func (c Command) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// Kind says what a remedy does.
type Kind string

// The kinds of remedies of an apply that conflicts, and of an object an
// autoscaler scales.
const (
	// Force: apply with --force-conflicts; the fields change hands (and
	// values), and the other manager may write them back.
	Force Kind = "force"
	// Leave: remove the fields from the manifest; their owner keeps them.
	Leave Kind = "leave"
	// Share: set the fields to the live values; equal values are
	// co-owned.
	Share Kind = "share"
	// Handover: the fields move to the applier without their values
	// changing.
	Handover Kind = "handover"
	// HandoverToAutoscaler: .spec.replicas moves from its holder to the
	// autoscaler's controller.
	HandoverToAutoscaler Kind = "handover-to-autoscaler"
	// WhoOwns: look at the object's ownership.
	WhoOwns Kind = "who-owns"
)

// Remedy is one suggested way out.
type Remedy struct {
	Kind    Kind   `json:"kind"`
	Summary string `json:"summary"`
	// Manager and Subresource name whom a handover takes the fields from.
	Manager     string `json:"manager,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// Paths are the fields the remedy is about.
	Paths []pathlang.Path `json:"paths,omitempty"`
	// Command does it; empty when the remedy is an edit of the manifest.
	Command Command `json:"command,omitempty"`
}

// Target is what makes a suggested command pasteable.
type Target struct {
	// ResourceArg names the object as kubectl does (deployment.v1.apps/web).
	ResourceArg string
	Namespace   string
	// ClusterFlags are the connection flags the user gave (--context,
	// --kubeconfig, --as, ...), as words.
	ClusterFlags []string
	// File is the manifest file (empty or "STDIN": a placeholder).
	File string
	// Kustomize is the -k directory the manifests came from: kubectl
	// apply must build it again rather than apply one file of it.
	Kustomize    string
	FieldManager string
	Subresource  string
}

// Line is head, then the connection flags and -n, then rest: the shape of
// every suggested command.
func (t Target) Line(head []string, rest ...string) Command {
	out := append(Command{}, head...)
	out = append(out, t.ClusterFlags...)
	if t.Namespace != "" {
		out = append(out, "-n", t.Namespace)
	}
	return append(out, rest...)
}

// SSA is kubectl ssa SUBCOMMAND... on the object: head words, the
// resource argument, the connection flags, then rest.
func (t Target) SSA(sub []string, rest ...string) Command {
	head := append(append(Command{"kubectl", "ssa"}, sub...), t.ResourceArg)
	return t.Line(head, rest...)
}

// Input is the -f or -k flag of the manifests.
func (t Target) Input() []string {
	switch {
	case t.Kustomize != "":
		return []string{"-k", t.Kustomize}
	case t.File == "" || t.File == "STDIN":
		return []string{"-f", "MANIFEST"}
	}
	return []string{"-f", t.File}
}

// ManagerFlag is --field-manager, unless it is kubectl's default.
func (t Target) ManagerFlag() []string {
	if t.FieldManager == "kubectl" || t.FieldManager == "" {
		return nil
	}
	return []string{"--field-manager=" + t.FieldManager}
}

// SubresourceFlag is --subresource when the apply is to one.
func (t Target) SubresourceFlag() []string {
	if t.Subresource == "" {
		return nil
	}
	return []string{"--subresource=" + t.Subresource}
}

// ForceApply is the forced server-side apply of the manifests.
func (t Target) ForceApply() Command {
	head := append(append(Command{"kubectl", "apply", "--server-side", "--force-conflicts"}, t.ManagerFlag()...), t.SubresourceFlag()...)
	return t.Line(head, t.Input()...)
}
