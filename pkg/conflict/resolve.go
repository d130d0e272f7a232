package conflict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// Resolutions are the ways out of what the report predicts, as data: for
// an apply that fails on conflicts, force, leave, share, a handover from
// each owner and a look at the ownership; for an object an autoscaler
// scales, the handovers of .spec.replicas to it; and the same ways out
// written as settings of the tool that applies (Argo CD, Flux, Helm: t.Tool,
// or the tool t.FieldManager is). t makes their commands pasteable (the
// object, connection, input and field manager flags).
func Resolutions(r *Simulation, t remedy.Target) []remedy.Remedy {
	out := replicasRemedies(r, t)
	if rf := r.Refused; rf != nil && rf.Tool == remedy.Helm {
		out = append(out, takeOwnership(r, rf))
		if len(rf.Labels) > 0 {
			summary := "or give it the release's label, then its annotations, and Helm adopts it"
			if adoptionConflicts(r) {
				summary += "; its apply then still fails on the conflicts above, as --take-ownership's does"
			}
			out = append(out, remedy.Remedy{Kind: remedy.HelmOwnershipMetadata, Summary: summary,
				Command: t.Line([]string{"kubectl", "label", t.ResourceArg}, append(keyValues(rf.Labels), "--overwrite")...)})
		}
		if len(rf.Annotations) > 0 {
			out = append(out, remedy.Remedy{Kind: remedy.HelmOwnershipMetadata, Summary: "the annotations",
				Command: t.Line([]string{"kubectl", "annotate", t.ResourceArg}, append(keyValues(rf.Annotations), "--overwrite")...)})
		}
	}
	if r.Message == "" || len(r.Conflicts) == 0 {
		return out
	}
	// A path two managers own is one conflict per manager: list it once.
	var unique, shareable []pathlang.Path
	listed := map[string]bool{}
	for _, cf := range r.Conflicts {
		if key := cf.Path.APIServerString(); !listed[key] {
			listed[key] = true
			unique = append(unique, cf.Path)
			if len(cf.StoredAs) == 0 {
				shareable = append(shareable, cf.Path)
			}
		}
	}
	force := "take the fields: force the apply (it takes " + v1alpha1.Takes(r.Conflicts) + "); the other manager may write them back (a controller will): then hand them over instead"
	if fa := r.ForcedAdmission; fa != nil && fa.Denied != "" {
		force += "; admission would then refuse it: " + fa.Denied
	} else if fa != nil && !fa.Exact {
		force += "; admission not evaluated here matches the forced apply: check it with --force-conflicts --verify"
	}
	if tools.ToolFor(t) != remedy.Helm {
		// Helm's own force (helmForce) replaces kubectl's: kubectl apply of
		// a chart's render would remove the label and annotations Helm
		// adds, outside the release's history.
		rm := remedy.Remedy{Kind: remedy.Force, Summary: force, Paths: unique, Command: t.ForceApply()}
		if t.Subresource == string(v1alpha1.SubresourceScale) {
			// The server takes only an autoscaling/v1 Scale at /scale, and
			// kubectl's apply sends the manifest's kind (a Scale it can't
			// map): no kubectl command forces it.
			rm.Command = nil
			rm.Summary += "; kubectl can't apply to /scale (the server takes only an autoscaling/v1 Scale there, which kubectl apply can't send): force it in the program that applies to /scale (client-go: ApplyOptions{Force: true})"
		}
		out = append(out, rm)
	}
	out = append(out,
		remedy.Remedy{Kind: remedy.Leave, Summary: "leave them to their owner: remove these fields from your manifest, then apply", Paths: unique})
	if len(shareable) > 0 {
		out = append(out, remedy.Remedy{Kind: remedy.Share, Summary: "share them: set them in your manifest to the live values; equal values are co-owned, not conflicts", Paths: shareable})
	}
	for _, cf := range v1alpha1.FirstPerOwner(r.Conflicts) {
		if r.AutoscalerTakesBack(cf) || r.Subresource != "" {
			// handover gives fields to an applier of the main resource:
			// an apply to a subresource is another manager entry.
			continue
		}
		var paths []pathlang.Path
		var args []string
		for _, other := range r.Conflicts {
			if other.Manager == cf.Manager && other.Subresource == cf.Subresource {
				paths = append(paths, other.Path)
				args = append(args, "--field", other.Path.String())
			}
		}
		args = append(args, "--from", cf.Manager)
		if cf.Subresource != "" {
			args = append(args, "--from-subresource", string(cf.Subresource))
		}
		args = append(args, "--to", t.FieldManager, "--mode", "applier")
		out = append(out, remedy.Remedy{Kind: remedy.Handover, Summary: fmt.Sprintf("hand the fields over from %q to %q, without their values changing now (the next apply then sets its own, with no conflict)", cf.Manager, t.FieldManager),
			Manager: cf.Manager, Subresource: string(cf.Subresource), Paths: paths, Command: t.SSA([]string{"handover"}, args...)})
	}
	out = append(out, toolFixes(r, t)...)
	return append(out, remedy.Remedy{Kind: remedy.WhoOwns, Summary: "see who owns what", Command: t.SSA([]string{"who-owns"})})
}

// keyValues are a map's entries as KEY=VALUE words, in key order.
func keyValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// replicasRemedies are the ways to leave .spec.replicas to an autoscaler:
// for a manifest that sets it, handovers from its holders; for a write
// that resets it (ControlledResets), the same handovers made before the
// write, and for Helm's client-side upgrade, which deletes it whoever owns
// it, the server-side upgrade.
func replicasRemedies(r *Simulation, t remedy.Target) []remedy.Remedy {
	var out []remedy.Remedy
	resets := len(r.ControlledResets) > 0
	if len(r.Autoscalers) == 0 && !resets {
		return nil
	}
	if h := r.HelmUpgrade; resets && h != nil && h.Mode == v1alpha1.HelmClientSide {
		var paths []pathlang.Path
		var names []string
		for _, cr := range r.ControlledResets {
			paths = append(paths, cr.Path)
			names = append(names, cr.Path.String())
		}
		summary := fmt.Sprintf("helm upgrade of this release is client-side by default (--server-side=auto follows the last revision), and a client-side upgrade writes over %s whoever owns it now (it deletes what the last revision rendered and this render drops, and sets what it sets): upgrade server-side", strings.Join(names, ", "))
		switch o := h.Other; {
		case o != nil && o.Conflicts:
			summary += ", which fails on the controller's fields instead of writing over them, and leave them out of the render"
		case o == nil || !o.ControlledResets:
			summary += ", which keeps them (the controller owns them)"
		case len(r.ReplicasHolders) > 0:
			summary += ", after the handovers below"
		}
		out = append(out, remedy.Remedy{Kind: remedy.HelmServerSide, Tool: remedy.Helm, Summary: summary, Paths: paths,
			Into:    &remedy.Into{Which: fmt.Sprintf("the helm upgrade of release %q", t.HelmRelease), Edit: remedy.Append},
			Snippet: "--server-side=true"})
	}
	for _, h := range r.ReplicasHolders {
		summary := fmt.Sprintf("hand .spec.replicas over from %q to the autoscaler's controller, then leave replicas out of your manifest", h.Manager)
		if resets {
			summary = fmt.Sprintf("before the apply, hand .spec.replicas over from %q to the autoscaler's controller: the apply, which drops replicas, then leaves it to the autoscaler instead of resetting it", h.Manager)
		}
		if h.LastApplied {
			summary += "; this also takes .spec.replicas out of its last-applied annotation, so that kubectl apply leaves it to the autoscaler"
		}
		out = append(out, remedy.Remedy{Kind: remedy.HandoverToAutoscaler, Summary: summary, Manager: h.Manager, Paths: []pathlang.Path{pathlang.Path(replicasPath)},
			Command: t.SSA([]string{"handover"}, "--field", ".spec.replicas", "--from", h.Manager, "--to", v1alpha1.AutoscalerController)})
	}
	return out
}

// adoptionConflicts tells whether the apply Helm makes once it adopts the
// object fails on conflicts the report lists.
func adoptionConflicts(r *Simulation) bool {
	return r.Message != "" && len(r.Conflicts) > 0
}

// takeOwnership is Helm's --take-ownership. It only skips Helm's
// ownership check: the adopted object is then updated as any other, by a
// server-side apply without force unless --force-conflicts (Helm 4
// pkg/action/install.go: KubeClient.Update with
// ClientUpdateOptionServerSideApply(i.ServerSideApply, i.ForceConflicts)),
// so a conflict the report lists still fails it, and the way through is
// both flags on a server-side install or upgrade (--force-conflicts acts
// on server-side apply only, and excludes --force-replace:
// pkg/cmd/install.go, upgrade.go).
func takeOwnership(r *Simulation, rf *v1alpha1.Refusal) remedy.Remedy {
	rm := remedy.Remedy{Kind: remedy.HelmTakeOwnership, Tool: remedy.Helm,
		Summary: "Helm adopts an object that exists without its release's label and annotations only when told to: --take-ownership (Helm 3.17 and later) makes the release take it as it is, and Helm then applies the chart's values to it",
		Into:    &remedy.Into{Which: fmt.Sprintf("the helm install or upgrade of release %q in namespace %q", rf.Release, rf.Namespace), Edit: remedy.Append},
		Snippet: "--take-ownership"}
	if !adoptionConflicts(r) {
		return rm
	}
	rm.Paths = uniquePaths(r.Conflicts)
	rm.Summary += fmt.Sprintf(". --take-ownership alone is not enough here: it skips the ownership check only, and Helm's apply of the adopted object still fails on the %d conflict%s above (a forced apply takes %s). Adopt and take them with --take-ownership --force-conflicts on a server-side apply (--server-side=true: install's default; an upgrade's \"auto\" keeps a release applied client-side so, whose patch overwrites them instead), which sets the chart's values over the live ones; a controller that owns one writes it back: leave those out of the chart first",
		len(rm.Paths), plural(len(rm.Paths)), v1alpha1.Takes(r.Conflicts))
	rm.Snippet = "--take-ownership --server-side=true --force-conflicts"
	return rm
}

// uniquePaths are the conflicts' paths, each once, in order.
func uniquePaths(conflicts []v1alpha1.Conflict) []pathlang.Path {
	var out []pathlang.Path
	seen := map[string]bool{}
	for _, cf := range conflicts {
		if key := cf.Path.APIServerString(); !seen[key] {
			seen[key] = true
			out = append(out, cf.Path)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
