package cmd

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// printHelmHeader says, in the text views, which revision the manifests
// came from and how Helm applied it; refusals: with Helm's ownership
// refusals (diff's header; explain-conflict says them of each object).
func (o *applyInput) printHelmHeader(w io.Writer, refusals bool) {
	r := o.helm.read
	if r == nil {
		return
	}
	if r.Version == 0 {
		fmt.Fprintf(w, "# helm release %s is not installed in namespace %s: the render is predicted as helm install applies it (server-side, Helm 4's default)\n", render.Escape(r.Name), render.Escape(r.Namespace))
		o.printHelmRefusals(w, refusals)
		fmt.Fprintln(w)
		return
	}
	how := helmHow(r, o.helm.mode, o.helm.serverSide, len(o.csaUpgrade) > 0)
	status := string(r.Status())
	if status == "" {
		status = "no status"
	}
	fmt.Fprintf(w, "# helm release %s, revision %d (%s), from %s: %s\n", render.Escape(r.Name), r.Version, render.Escape(status), render.Escape(r.Object), how)
	o.printHelmRefusals(w, refusals)
	if d := o.helm.deletes; len(d) > 0 {
		fmt.Fprintf(w, "# helm upgrade deletes %d object(s) of the release the render no longer has (annotate one helm.sh/resource-policy=keep to keep it): %s\n", len(d), render.Escape(strings.Join(d, ", ")))
	}
	fmt.Fprintln(w)
}

// helmHow says how Helm applied the revision, how helm upgrade's
// --server-side=auto writes next (as the last revision, whatever its
// status: helm's getUpgradeServerSideValue of the last release), and
// which of the two ways the prediction below is of (mode, from
// --helm-server-side; moves: a server-side upgrade that first moves
// helm's client-side ownership to its apply).
func helmHow(r *kube.HelmRelease, mode v1alpha1.HelmUpgradeMode, flag string, moves bool) string {
	applied := "applied client-side (Helm 3, or --server-side=false)"
	if r.ServerSide() {
		applied = "applied server-side"
	}
	last, lastRev := r.Release, ""
	if l := r.Latest; l != nil {
		last, lastRev = l, fmt.Sprintf("; revision %d after it (%s) was %s", l.Version, l.Status(), map[bool]string{true: "server-side", false: "client-side"}[l.ServerSide()])
	}
	next := "helm upgrade applies server-side next (--server-side=auto)"
	if !last.ServerSide() {
		next = "helm upgrade stays client-side (--server-side=auto) unless given --server-side=true"
	}
	predicted := "the prediction below is of a server-side apply"
	switch {
	case mode == v1alpha1.HelmClientSide:
		predicted = "the prediction below is of Helm's client-side patch (--server-side=" + flag + "), which deletes every field the last revision rendered and the render drops, whoever owns it now"
	case moves:
		predicted = "the prediction below is of --server-side=" + flag + ", which first moves helm's client-side ownership to its apply"
	}
	return applied + lastRev + ": " + next + "; " + predicted
}

// printHelmRefusals says Helm's ownership refusals in diff's header
// (explain-conflict says them of each object).
func (o *applyInput) printHelmRefusals(w io.Writer, refusals bool) {
	verb := "upgrade"
	if o.helm.read != nil && o.helm.read.Version == 0 {
		verb = "install"
	}
	if refusals {
		keys := make([]string, 0, len(o.helm.refusals))
		for k := range o.helm.refusals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "# helm refuses the %s before it applies anything: %s (kubectl ssa explain-conflict --helm-release says how to have Helm adopt it)\n", verb, render.Escape(o.helm.refusals[k]))
		}
	}
}
