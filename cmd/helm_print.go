package cmd

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// printHelmHeader says, in the text views, which revision the manifests
// came from and how Helm applied it.
func (o *explainOptions) printHelmHeader(w io.Writer) {
	r := o.helm.read
	if r == nil {
		return
	}
	if r.Version == 0 {
		fmt.Fprintf(w, "# helm release %s is not installed in namespace %s: the render is predicted as helm install applies it (server-side, Helm 4's default)\n", render.Escape(r.Name), render.Escape(r.Namespace))
		o.printHelmRefusals(w)
		fmt.Fprintln(w)
		return
	}
	how := helmHow(r, len(o.csaUpgrade) > 0)
	status := string(r.Status())
	if status == "" {
		status = "no status"
	}
	fmt.Fprintf(w, "# helm release %s, revision %d (%s), from %s: %s\n", render.Escape(r.Name), r.Version, render.Escape(status), render.Escape(r.Object), how)
	o.printHelmRefusals(w)
	if d := o.helm.deletes; len(d) > 0 {
		fmt.Fprintf(w, "# helm upgrade deletes %d object(s) of the release the render no longer has (annotate one helm.sh/resource-policy=keep to keep it): %s\n", len(d), render.Escape(strings.Join(d, ", ")))
	}
	fmt.Fprintln(w)
}

// helmHow says how Helm applied the revision and how helm upgrade's
// --server-side=auto applies next: as the last revision, whatever its
// status (helm's getUpgradeServerSideValue of the last release); moves:
// the prediction makes the client-side-to-server-side move first.
func helmHow(r *kube.HelmRelease, moves bool) string {
	const (
		server = "applied server-side"
		client = "applied client-side (Helm 3, or --server-side=false)"
		move   = "first moves helm's client-side ownership to its apply"
	)
	if l := r.Latest; l != nil {
		applied, method, next := "applied client-side", "client-side", "stays client-side"
		if r.ServerSide() {
			applied = server
		}
		if l.ServerSide() {
			method, next = "server-side", "applies server-side"
		}
		how := fmt.Sprintf("%s; revision %d after it (%s) was %s, and helm upgrade follows the last revision: it %s next (--server-side=auto)", applied, l.Version, l.Status(), method, next)
		if !r.ServerSide() && moves {
			how += "; the prediction below " + move + ", as a server-side upgrade of a client-side release does"
		}
		return how
	}
	switch {
	case r.ServerSide():
		return server + ": helm upgrade applies server-side next (--server-side=auto)"
	case moves:
		return client + ": helm upgrade stays client-side (--server-side=auto) unless given --server-side=true, which " + move + "; the prediction below makes that move"
	}
	return client + ": helm upgrade stays client-side (--server-side=auto) unless given --server-side=true"
}

// printHelmRefusals says Helm's ownership refusals in diff's header
// (explain-conflict says them of each object).
func (o *explainOptions) printHelmRefusals(w io.Writer) {
	verb := "upgrade"
	if o.helm.read != nil && o.helm.read.Version == 0 {
		verb = "install"
	}
	if o.what == "diff" {
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
