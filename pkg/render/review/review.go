// Package review is what the -o formats made for pull requests and CI
// (sarif, markdown, junit) print, taken from the reports: per object, its
// problems (conflicts, controlled resets, admission's denials, the
// apiserver's errors, audit's findings), each with its rule, level, path,
// owners and fix, and where its manifest sets it. It computes nothing:
// every word comes from a report; the caller, which read the manifests,
// fills in the lines (Object.URI, Problem.Line).
package review

import (
	"encoding/json"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Level is how bad a problem is, as SARIF names levels.
type Level string

// The levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelNote    Level = "note"
)

// LevelOf is the level of an audit severity.
func LevelOf(s v1alpha1.Severity) Level {
	switch s {
	case v1alpha1.SeverityError:
		return LevelError
	case v1alpha1.SeverityWarning:
		return LevelWarning
	}
	return LevelNote
}

// Rule is a kind of problem: our code, with its help and fix.
type Rule struct {
	ID    string
	Level Level
	// Short is one sentence; Help and Fix are Markdown.
	Short, Help, Fix string
}

// The rules of an apply's prediction (explain-conflict, diff).
var (
	RuleConflict = Rule{ID: "conflict", Level: LevelError,
		Short: "The apply conflicts: another field manager owns the field with a different value.",
		Help:  "A server-side apply fails when it sets a field that another field manager owns with a different value; nothing of the object is written.",
		Fix:   "Take the field with `--force-conflicts` (the other manager loses it: a controller sets it back), hand it over (`kubectl ssa handover`), or stop setting it in the manifest. `kubectl ssa explain-conflict` lists the ways out."}
	RuleControlledReset = Rule{ID: "controlled-reset", Level: LevelWarning,
		Short: "The apply removes or resets a field a controller sets.",
		Help:  "The controller sets the field again after the apply; meanwhile the object runs with the default (an autoscaled workload's replicas: pods go, then come back).",
		Fix:   "Keep the field out of the manifest and hand it over to the controller (`kubectl ssa handover`), as `kubectl ssa explain-conflict` says."}
	RuleAdmissionDenial = Rule{ID: "admission-denial", Level: LevelError,
		Short: "The cluster's admission refuses the apply.",
		Help:  "A built-in admission plugin or a ValidatingAdmissionPolicy evaluated on the prediction denies the apply, with the message the server answers.",
		Fix:   "Change the manifest so that the policy admits it, or ask the policy's owners for an exception."}
	RuleApplyError = Rule{ID: "apply-error", Level: LevelError,
		Short: "The apiserver refuses the apply.",
		Help:  "The prediction of the apply ends with the apiserver's error (validation, an immutable field), as the apply would.",
		Fix:   "Correct the manifest as the message says."}
	RuleRefused = Rule{ID: "refused", Level: LevelError,
		Short: "The applying tool refuses the object before it applies it.",
		Help:  "Helm refuses to take an object that exists and is not its release's (its ownership metadata).",
		Fix:   "Add the labels and annotations the tool needs, as `kubectl ssa explain-conflict` shows, or delete the object."}
	RuleNotExact = Rule{ID: "not-exact", Level: LevelWarning,
		Short: "The prediction is not exact: what was not evaluated here may change or refuse the apply.",
		Help:  "A webhook, a policy that reads who applies, or a validation not modelled here matches the apply: its answer is not known here, so finding no problem is not a pass.",
		Fix:   "Have the server's dry run check it where a cluster is reachable (`kubectl ssa explain-conflict --verify`), or accept the risk for this object."}
)

// ApplyRules are the rules of explain-conflict and diff, in order.
var ApplyRules = []Rule{RuleConflict, RuleControlledReset, RuleAdmissionDenial, RuleApplyError, RuleRefused, RuleNotExact}

// Problem is one problem of one object.
type Problem struct {
	Rule  string
	Level Level
	// Path is the field (none: the object as a whole).
	Path    pathlang.Path
	Message string
	// Owners are the field managers involved (a conflict's owner, a
	// finding's manager).
	Owners []string
	// Fix is the command that fixes it ("": none to run).
	Fix string
	// Line is where the manifest sets Path (0: not known; the object's
	// line then, or no region); Exact says the file holds the whole
	// path, not only a part of it.
	Line  int
	Exact bool
}

// Object is one object's problems and changes.
type Object struct {
	Ref     v1alpha1.ObjectRef
	Cluster string
	Action  v1alpha1.Action
	// Source is where the manifest came from, as kubectl names it (a
	// file, STDIN, a kustomization, a Helm release); "" for live state.
	Source string
	// URI is the manifest's file as a relative or file: URI, "" when the
	// object is not read from a file (standard input, a kustomization's
	// or a Helm release's render, the cluster's state); Line is where its
	// document starts there.
	URI      string
	Line     int
	Problems []Problem
	// Changes are what a diff changes (none for the other commands).
	Changes []v1alpha1.DiffChange
}

// Document is one run's objects, with the rules they can break.
type Document struct {
	// Command is the kubectl ssa command that made it (diff, audit).
	Command string
	// Version is kubectl-ssa's.
	Version string
	Rules   []Rule
	Objects []Object
	// Snapshot says what snapshot the prediction read and when it was
	// taken ("": the cluster, live).
	Snapshot string
	// Scanned and Unlisted are audit's: the objects read, and the kinds
	// that could not be listed.
	Scanned  int
	Unlisted []string
}

// Counts are what the summaries say.
type Counts struct {
	Objects, WithProblems, Changes int
	ByRule                         map[string]int
	ByLevel                        map[Level]int
}

// Count counts the document's problems and changes.
func (d *Document) Count() Counts {
	c := Counts{Objects: len(d.Objects), ByRule: map[string]int{}, ByLevel: map[Level]int{}}
	for _, o := range d.Objects {
		if len(o.Problems) > 0 {
			c.WithProblems++
		}
		for _, p := range o.Problems {
			c.ByRule[p.Rule]++
			c.ByLevel[p.Level]++
		}
		c.Changes += len(o.Changes)
	}
	return c
}

// Rule is the rule of id (its id alone when unknown).
func (d *Document) Rule(id string) Rule {
	for _, r := range d.Rules {
		if r.ID == id {
			return r
		}
	}
	return Rule{ID: id, Level: LevelWarning}
}

// FromConflict is the problems of explain-conflict's report.
func FromConflict(r *v1alpha1.ConflictReport) Object {
	o := Object{Ref: r.Object, Action: r.Action}
	o.Problems = applyProblems(r.Conflicts, r.ControlledResets, r.Admission, r.Message, r.Refused, r.Resolutions)
	o.Problems = append(o.Problems, notExact(r.Admission, r.Unchecked)...)
	return o
}

// FromDiff is the problems and changes of diff's report.
func FromDiff(r *v1alpha1.DiffReport) Object {
	o := Object{Ref: r.Object, Action: r.Action, Changes: r.Changes}
	o.Problems = applyProblems(r.Conflicts, r.ControlledResets, r.Admission, r.Message, nil, append(append([]remedy.Remedy{}, r.Remedies...), r.ResetRemedies...))
	o.Problems = append(o.Problems, notExact(r.Admission, r.Unchecked)...)
	return o
}

// notExact is the problem of a prediction that is not exact (exit 4):
// admission not evaluated here matches, or validation not modelled here
// checks the result. None when it is exact.
func notExact(adm *v1alpha1.AdmissionReport, unchecked []string) []Problem {
	var why []string
	if adm != nil && !adm.Exact {
		why = append(why, adm.Reasons...)
		if len(adm.Reasons) == 0 {
			why = append(why, "admission not evaluated here matches")
		}
	}
	why = append(why, unchecked...)
	if len(why) == 0 {
		return nil
	}
	return []Problem{{Rule: RuleNotExact.ID, Level: RuleNotExact.Level, Message: "the prediction is not exact: " + strings.Join(why, "; ")}}
}

func applyProblems(conflicts []v1alpha1.Conflict, resets []v1alpha1.ControlledReset, adm *v1alpha1.AdmissionReport, message string, refused *v1alpha1.Refusal, fixes []remedy.Remedy) []Problem {
	var out []Problem
	for _, cf := range conflicts {
		owner := cf.Manager
		if cf.Subresource != "" {
			owner += " (/" + string(cf.Subresource) + ")"
		}
		msg := cf.Path.String() + ": owned by " + quote(owner) + " with " + Value(cf.LiveValue) + "; the manifest sets " + Value(cf.AppliedValue)
		if cf.Likely != "" {
			msg += " (" + quote(cf.Manager) + " is most likely " + cf.Likely + ")"
		}
		out = append(out, Problem{Rule: RuleConflict.ID, Level: RuleConflict.Level, Path: cf.Path, Message: msg, Owners: []string{cf.Manager}, Fix: fixFor(fixes, cf.Path)})
	}
	for _, cr := range resets {
		out = append(out, Problem{Rule: RuleControlledReset.ID, Level: RuleControlledReset.Level, Path: cr.Path, Message: resetMessage(cr), Fix: fixFor(fixes, cr.Path)})
	}
	denied := adm != nil && adm.Denied != ""
	if denied {
		msg := adm.Denied
		if len(adm.Denials) > 1 {
			msg += " (or, in an order the server does not fix: " + strings.Join(adm.Denials, "; ") + ")"
		}
		out = append(out, Problem{Rule: RuleAdmissionDenial.ID, Level: RuleAdmissionDenial.Level, Message: msg})
	}
	if refused != nil {
		out = append(out, Problem{Rule: RuleRefused.ID, Level: RuleRefused.Level, Message: string(refused.Tool) + ": " + refused.Message})
	}
	if message != "" && len(conflicts) == 0 && !denied {
		out = append(out, Problem{Rule: RuleApplyError.ID, Level: RuleApplyError.Level, Message: message})
	}
	return out
}

func resetMessage(cr v1alpha1.ControlledReset) string {
	what := "resets it to " + Value(cr.Value)
	switch {
	case cr.Removed:
		what = "removes it"
	case cr.Set:
		what = "sets it to " + Value(cr.Value)
	}
	msg := cr.Path.String() + ": " + cr.Controller + " sets it; the apply " + what
	if cr.Was != nil {
		msg += " (live: " + Value(*cr.Was) + ")"
	}
	return msg
}

// fixFor is the command of the first remedy about p, else of the first
// remedy with a command ("": none has one).
func fixFor(fixes []remedy.Remedy, p pathlang.Path) string {
	first := ""
	for _, f := range fixes {
		if len(f.Command) == 0 {
			continue
		}
		if first == "" {
			first = f.Command.String()
		}
		for _, q := range f.Paths {
			if q.String() == p.String() {
				return f.Command.String()
			}
		}
	}
	return first
}

// FromAudit is audit's findings, one Object per object found, in the
// report's order.
func FromAudit(r *v1alpha1.AuditReport) []Object {
	var out []Object
	at := map[string]int{}
	for _, f := range r.Findings {
		key := f.Cluster + "\x00" + f.Object.APIVersion + "\x00" + f.Object.Display()
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Object{Ref: f.Object, Cluster: f.Cluster})
		}
		p := Problem{Rule: string(f.Code), Level: LevelOf(f.Severity), Message: f.Message, Fix: f.Fix.String()}
		if f.Manager != "" {
			p.Owners = append([]string{f.Manager}, f.SharedWith...)
		}
		if len(f.Paths) > 0 {
			p.Path = f.Paths[0]
		}
		out[i].Problems = append(out[i].Problems, p)
	}
	return out
}

// Value is a value as JSON writes it (a Secret's, redacted already).
func Value(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func quote(s string) string { return `"` + s + `"` }
