package diff

import (
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// explainHead is the command that lists every way out.
var explainHead = []string{"kubectl", "ssa", "explain-conflict"}

// conflictRemedies are the ways out of an apply that fails on conflicts
// that the diff offers (explain-conflict lists them all): the forced
// apply, as Helm forces it when Helm applies, and explain-conflict. None
// when the apply does not fail (no conflicts, or forced).
func conflictRemedies(r *v1alpha1.DiffReport, t remedy.Target) []remedy.Remedy {
	if len(r.Conflicts) == 0 || r.Force {
		return nil
	}
	var out []remedy.Remedy
	switch {
	case tools.ToolFor(t) == remedy.Helm:
		// kubectl apply of the render would drop what Helm adds.
		verb := "upgrade"
		if t.HelmInstall {
			verb = "install"
		}
		out = append(out, remedy.Remedy{Kind: remedy.HelmForce, Tool: remedy.Helm, Summary: "force the apply with Helm 4's flags",
			Into:    &remedy.Into{Which: "helm " + verb, Edit: remedy.Append},
			Snippet: "--server-side=true --force-conflicts"})
	case t.Subresource == "":
		out = append(out, remedy.Remedy{Kind: remedy.Force, Summary: "take the fields: force the apply", Command: t.ForceApply()})
	}
	rest := append(append(append(t.ManagerFlag(), t.SubresourceFlag()...), t.ForFlag()...), t.SSAInput()...)
	return append(out, remedy.Remedy{Kind: remedy.Explain, Summary: "see why and the ways out", Command: t.InputLine(explainHead, rest...)})
}

// resetRemedies are the ways out of the resets a controller undoes, to
// take before the apply: explain-conflict lists them.
func resetRemedies(r *v1alpha1.DiffReport, t remedy.Target) []remedy.Remedy {
	if len(r.ControlledResets) == 0 {
		return nil
	}
	rest := append(append(t.ManagerFlag(), t.ForFlag()...), t.SSAInput()...)
	return []remedy.Remedy{{Kind: remedy.Explain, Summary: "the ways out, before you apply", Command: t.InputLine(explainHead, rest...)}}
}
