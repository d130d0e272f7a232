package cmd

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/yamlpos"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/junit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/markdown"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/sarif"
)

// The -o formats made for pull requests and CI: every report of the run
// in one document (printer.go's documents).
const (
	formatSARIF    = "sarif"
	formatMarkdown = "markdown"
	formatJUnit    = "junit"
)

// reviewFormats are the views the review documents add to a command's -o.
var reviewFormats = []string{formatSARIF, formatMarkdown, formatJUnit}

// reviewDocuments are the review formats of a command whose reports
// make the document doc.
func reviewDocuments[R any](doc func(reports []R) *review.Document) documentSet[R] {
	return documentSet[R]{
		formatSARIF:    func(w io.Writer, rs []R) error { return sarif.Write(w, doc(rs)) },
		formatMarkdown: func(w io.Writer, rs []R) error { return markdown.Write(w, doc(rs), markdown.Options{}) },
		formatJUnit:    func(w io.Writer, rs []R) error { return junit.Write(w, doc(rs)) },
	}
}

// locator places the problems of explain-conflict's and diff's objects
// in the manifests they came from: the file and line of each field,
// when the manifest is a file of its own (not standard input, a URL, a
// kustomization's or a Helm release's render).
type locator struct {
	manifests []kube.Manifest
	kustomize bool
	files     map[string]*yamlpos.Index
}

// place fills in o's source, file and lines.
func (l *locator) place(o review.Object) review.Object {
	o.Source = l.source(o.Ref)
	ix := l.index(o.Source)
	if ix == nil {
		return o
	}
	o.URI = fileURI(o.Source)
	o.Line = ix.Object(o.Ref.Kind, o.Ref.Namespace, o.Ref.Name)
	for i := range o.Problems {
		p := &o.Problems[i]
		if len(p.Path) > 0 {
			p.Line, p.Exact = ix.Line(o.Ref.Kind, o.Ref.Namespace, o.Ref.Name, p.Path.Elements())
		}
	}
	return o
}

// source is the manifest ref came from ("" when none matches).
func (l *locator) source(ref v1alpha1.ObjectRef) string {
	for _, m := range l.manifests {
		u := m.Object
		if u.GetKind() == ref.Kind && u.GetName() == ref.Name && (u.GetNamespace() == "" || u.GetNamespace() == ref.Namespace) {
			return m.Source
		}
	}
	return ""
}

// index is the file source's objects with their lines (nil: not a file
// of its own, or not YAML that parses).
func (l *locator) index(source string) *yamlpos.Index {
	if l.kustomize || source == "" || source == "STDIN" || strings.Contains(source, "://") {
		return nil
	}
	if ix, ok := l.files[source]; ok {
		return ix
	}
	if l.files == nil {
		l.files = map[string]*yamlpos.Index{}
	}
	l.files[source] = nil
	if st, err := os.Stat(source); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(source)
	if err != nil {
		return nil
	}
	ix, err := yamlpos.Parse(b)
	if err != nil {
		return nil
	}
	l.files[source] = ix
	return ix
}

// fileURI is path as a URI: relative as given (code scanning resolves it
// from the repository's root, where CI runs), file: when absolute.
func fileURI(path string) string {
	path = filepath.ToSlash(filepath.Clean(path))
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	u := strings.Join(parts, "/")
	if filepath.IsAbs(path) {
		return "file://" + u
	}
	return u
}

// reviewOf is the review document of an apply command's objects.
func (o *applyInput) reviewOf(command string, objects []review.Object) *review.Document {
	l := &locator{manifests: o.read, kustomize: o.files.Kustomize != ""}
	for i := range objects {
		objects[i] = l.place(objects[i])
	}
	return &review.Document{Command: command, Version: versionInfo().Version, Rules: review.ApplyRules, Objects: objects, Snapshot: o.snapshot.sentence()}
}

// auditRules are audit's codes as review rules (audit.Table's words).
func auditRules() []review.Rule {
	out := make([]review.Rule, 0, len(audit.Table))
	for _, c := range audit.Table {
		out = append(out, review.Rule{ID: string(c.Code), Level: review.LevelOf(c.Severity), Short: strings.Join(c.Help, " "), Help: c.What, Fix: c.Fix})
	}
	return out
}

// auditReview is the review document of audit's reports.
func auditReview(reports []*v1alpha1.AuditReport) *review.Document {
	d := &review.Document{Command: "audit", Version: versionInfo().Version, Rules: auditRules()}
	for _, r := range reports {
		d.Objects = append(d.Objects, review.FromAudit(r)...)
		d.Scanned += r.Scanned
		d.Unlisted = append(d.Unlisted, r.Unlisted...)
	}
	return d
}

// diffObjects are the review objects of diffs.
func diffObjects(ds []*diff.Computed) []review.Object {
	out := make([]review.Object, len(ds))
	for i, d := range ds {
		out[i] = review.FromDiff(d.Report)
	}
	return out
}
