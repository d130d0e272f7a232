// Package remedy is how every report carries its suggested fixes: as data
// (a summary and the command as words), built from one Target (the object,
// how the user reached the cluster, where the manifests came from, the
// field manager), so that every command kubectl-ssa suggests pastes as is
// with the same context, namespace and input flags; a fix written as a
// tool's setting (Argo CD, Flux, Helm) carries its snippet and where it
// goes. Views only quote and colour them.
package remedy

import (
	"encoding/json"
	"fmt"
	"strconv"

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
	// Explain: see why the apply fails or what it resets, and every way
	// out (kubectl ssa explain-conflict).
	Explain Kind = "explain-conflict"

	// The same ways out, written as settings of the tool that applies
	// (Remedy.Tool): Snippet goes Into one of its objects or files.

	// ArgoCDIgnoreDifferences: an Application's ignoreDifferences entry
	// with the sync options that make the sync send the live values.
	ArgoCDIgnoreDifferences Kind = "argocd-ignore-differences"
	// FluxKustomizationIgnore: a Kustomization's drift ignore rule.
	FluxKustomizationIgnore Kind = "flux-kustomization-ignore"
	// FluxHelmReleaseIgnore: a HelmRelease's drift ignore rule, and the
	// post-renderer that keeps upgrades off the fields.
	FluxHelmReleaseIgnore Kind = "flux-helmrelease-ignore"
	// HelmChart: the change to the chart's template that stops rendering
	// the fields.
	HelmChart Kind = "helm-chart"
	// HelmForce: Helm 4's --force-conflicts (the fields take the chart's
	// values).
	HelmForce Kind = "helm-force-conflicts"
	// HelmTakeOwnership: Helm's --take-ownership, which adopts an object
	// that exists without the release's label and annotations.
	HelmTakeOwnership Kind = "helm-take-ownership"
	// HelmOwnershipMetadata: give an object the label or annotations
	// that make Helm adopt it.
	HelmOwnershipMetadata Kind = "helm-ownership-metadata"
	// HelmServerSide: helm upgrade --server-side=true, for a release
	// recorded as client-side apply whose default (client-side) upgrade
	// deletes what a controller owns now.
	HelmServerSide Kind = "helm-server-side"
)

// Kinds are every Kind, in order.
var Kinds = []Kind{Force, Leave, Share, Handover, HandoverToAutoscaler, WhoOwns, Explain,
	ArgoCDIgnoreDifferences, FluxKustomizationIgnore, FluxHelmReleaseIgnore, HelmChart, HelmForce, HelmTakeOwnership, HelmOwnershipMetadata, HelmServerSide}

// Tool is an applier whose own settings a remedy can be written in.
type Tool string

// The tools kubectl-ssa writes fixes for (--for).
const (
	ArgoCD Tool = "argocd"
	Flux   Tool = "flux"
	Helm   Tool = "helm"
)

// Tools are every Tool, in order.
var Tools = []Tool{ArgoCD, Flux, Helm}

// ParseTool reads --for.
func ParseTool(s string) (Tool, error) {
	for _, t := range Tools {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("--for must be argocd, flux or helm, not %q", s)
}

// Edit says what to do with a Snippet where it goes.
type Edit string

// The edits of a snippet.
const (
	// Merge the snippet's YAML into the object (lists: add the items).
	Merge Edit = "merge"
	// Replace the lines that render the fields with the snippet's.
	Replace Edit = "replace"
	// Remove the snippet's lines.
	Remove Edit = "remove"
	// Append the snippet's words to the command line.
	Append Edit = "append"
)

// Edits are every Edit, in order.
var Edits = []Edit{Merge, Replace, Remove, Append}

// Into is where a remedy's snippet goes: an object of the tool (its
// apiVersion and kind) or a file (a chart's template).
type Into struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	File       string `json:"file,omitempty"`
	// Which says which one of them: the one that deploys the object.
	Which string `json:"which"`
	Edit  Edit   `json:"edit"`
}

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
	// Tool is the applier whose settings the remedy is written in; empty
	// for kubectl's.
	Tool Tool `json:"tool,omitempty"`
	// Into and Snippet are the edit of a Tool's object or file: the YAML
	// (or template lines) to put where Into says.
	Into    *Into  `json:"into,omitempty"`
	Snippet string `json:"snippet,omitempty"`
}

// Target is what makes a suggested command pasteable.
type Target struct {
	// ResourceArg names the object as kubectl does (deployment.v1.apps/web).
	ResourceArg string
	Namespace   string
	// MixedNamespaces: the objects of the input are not all in Namespace
	// (the manifests name theirs). A command that reads the input then
	// has no -n, which kubectl refuses for an object in another one.
	MixedNamespaces bool
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
	// Tool is --for, as given (empty: inferred from FieldManager).
	Tool Tool
	// HelmRelease and HelmRevision are --helm-release and --helm-revision:
	// the manifests are a Helm release's (its own, without File or
	// Kustomize; or its next render), which kubectl ssa applies with the
	// label and annotations Helm adds. kubectl apply of the file would
	// remove them, so Input names a placeholder.
	HelmRelease  string
	HelmRevision int
	// HelmServerSide is --helm-server-side when not auto.
	HelmServerSide string
	// HelmInstall: the release is not installed yet (helm install).
	HelmInstall bool
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

// InputLine is Line for a command that reads the input (-f, -k): -n
// only when every object of the input is in Namespace.
func (t Target) InputLine(head []string, rest ...string) Command {
	if t.MixedNamespaces {
		t.Namespace = ""
	}
	return t.Line(head, rest...)
}

// SSA is kubectl ssa SUBCOMMAND... on the object: head words, the
// resource argument, the connection flags, then rest.
func (t Target) SSA(sub []string, rest ...string) Command {
	head := append(append(Command{"kubectl", "ssa"}, sub...), t.ResourceArg)
	return t.Line(head, rest...)
}

// Input is the -f or -k flag of the manifests, for kubectl apply.
func (t Target) Input() []string {
	if t.HelmRelease != "" {
		return []string{"-f", "MANIFEST"}
	}
	return t.fileInput()
}

// SSAInput is the input flags of the manifests for a kubectl ssa command:
// --helm-release and -f or -k.
func (t Target) SSAInput() []string {
	if t.HelmRelease == "" {
		return t.fileInput()
	}
	out := []string{"--helm-release", t.HelmRelease}
	if t.HelmRevision > 0 {
		out = append(out, "--helm-revision", strconv.Itoa(t.HelmRevision))
	}
	if t.HelmServerSide != "" {
		out = append(out, "--helm-server-side="+t.HelmServerSide)
	}
	if t.File == "" && t.Kustomize == "" {
		return out // the release's own manifests
	}
	return append(out, t.fileInput()...)
}

func (t Target) fileInput() []string {
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

// ForFlag is --for when it was given.
func (t Target) ForFlag() []string {
	if t.Tool == "" {
		return nil
	}
	return []string{"--for=" + string(t.Tool)}
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
	return t.InputLine(head, t.Input()...)
}
