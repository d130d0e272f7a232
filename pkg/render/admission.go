package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// mayDo words what a step whose effect is not known may do.
var mayDo = map[v1alpha1.Effect]string{v1alpha1.EffectMayDeny: "deny the apply", v1alpha1.EffectMayMutate: "change the object", v1alpha1.EffectMayWarn: "warn"}

// admissionLines say what admission does to the apply, one line a step,
// and whether the prediction is exact; bad tells the lines that make it
// not exact. check is how the user has the server's dry run check it
// ("": it was checked).
func admissionLines(a *v1alpha1.AdmissionReport, check string) (lines []string, bad []bool) {
	if a == nil {
		return nil, nil
	}
	add := func(l string, b bool) {
		lines = append(lines, l)
		bad = append(bad, b)
	}
	for _, s := range a.Steps {
		what := fmt.Sprintf("%s %s", s.Kind, Escape(s.Name))
		if s.Kind == v1alpha1.BuiltinPlugin {
			what = "plugin " + Escape(s.Name)
			if strings.Contains(s.Name, "+") {
				what = "plugins " + Escape(strings.ReplaceAll(s.Name, "+", ", "))
			}
		}
		var l string
		switch {
		case s.Effect == v1alpha1.EffectMutates:
			var ops []string
			owner := "owned by no one"
			for _, op := range s.Ops {
				ops = append(ops, opLine(op))
				if op.Atomic {
					owner = "owned by the applier with the rest of the atomic list: its next apply without it removes it"
				}
			}
			if s.Kind == v1alpha1.MutatingAdmissionPolicy {
				owner = "evaluated here; the server records no manager for admission's changes"
			}
			l = fmt.Sprintf("admission: %s %s (%s; in the prediction)", what, strings.Join(ops, ", "), owner)
		case s.Effect == v1alpha1.EffectWarns:
			l = fmt.Sprintf("admission: %s warns: %s", what, Escape(s.Message))
		case s.Effect == v1alpha1.EffectDenies:
			// The message is the denial's, said once where it is.
			l = fmt.Sprintf("admission: %s denies the apply", what)
		case s.Effect == v1alpha1.EffectAudits && s.Message != "":
			l = fmt.Sprintf("admission: %s audits: %s", what, Escape(s.Message))
		case s.Effect == v1alpha1.EffectAudits:
			l = fmt.Sprintf("admission: %s matches: it only audits", what)
		case s.Effect == v1alpha1.EffectAdmits && s.Kind == v1alpha1.MutatingAdmissionPolicy:
			l = fmt.Sprintf("admission: %s changes nothing (evaluated here)", what)
		case s.Effect == v1alpha1.EffectAdmits:
			l = fmt.Sprintf("admission: %s admits the apply (evaluated here)", what)
		case s.Kind == v1alpha1.BuiltinPlugin:
			// A built-in plugin always acts; it is its effect that is not
			// known here.
			l = fmt.Sprintf("admission: %s may %s", what, mayDo[s.Effect])
		default:
			l = fmt.Sprintf("admission: %s matches: it may %s (not evaluated here)", what, mayDo[s.Effect])
		}
		if len(s.Caveats) > 0 {
			l += "; " + Escape(strings.Join(s.Caveats, "; "))
		}
		if len(s.Unknown) > 0 {
			l += "; not known here: " + Escape(strings.Join(pathlang.Strings(s.Unknown), ", "))
		}
		add(l, s.Effect != v1alpha1.EffectMutates && s.Effect != v1alpha1.EffectAudits && s.Effect != v1alpha1.EffectAdmits)
	}
	for _, r := range a.Reasons {
		if strings.HasPrefix(r, "admission is not fully known") {
			add(Escape(r), true)
		}
	}
	if !a.Exact && check != "" {
		add("admission: the prediction is not exact: "+check+" has the server's dry run check it", true)
	}
	return lines, bad
}

// opLine says what one op does.
func opLine(op v1alpha1.AdmissionOp) string {
	path := Escape(pathlang.FromSegments(op.Path).String())
	v := Escape(opValue(op.Value))
	switch {
	case op.GenerateName != "":
		if m, ok := op.Value.(map[string]any); ok {
			// The name is said after.
			shown := make(map[string]any, len(m))
			for k, x := range m {
				if k != "name" {
					shown[k] = x
				}
			}
			v = Escape(opValue(shown))
		}
		return fmt.Sprintf("adds %s to %s, named %s and five characters the server generates", v, path, Escape(op.GenerateName))
	case op.Op == v1alpha1.OpAppend:
		if s, ok := op.Value.(string); ok {
			v = Escape(s) // a finalizer, as it is
		}
		return fmt.Sprintf("adds %s to %s", v, path)
	case op.Op == v1alpha1.OpReplace:
		if names := itemNames(op.Value); names != "" {
			// A list of named items: its names say it; the JSON report
			// has it whole.
			return fmt.Sprintf("replaces %s with the items %s", path, Escape(names))
		}
		return fmt.Sprintf("replaces %s with %s", path, v)
	case op.Op == v1alpha1.OpRemove:
		return "removes " + path
	}
	return fmt.Sprintf("sets %s to %s", path, v)
}

// itemNames are the names of a list whose items all have one, in order
// ("": it is not such a list).
func itemNames(v any) string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return ""
	}
	names := make([]string, 0, len(list))
	for _, it := range list {
		m, _ := it.(map[string]any)
		name, ok := m["name"].(string)
		if !ok {
			return ""
		}
		names = append(names, strconv.Quote(name))
	}
	return strings.Join(names, ", ")
}

// opValue is a value as written: a string quoted, anything else as JSON,
// cut short (the JSON report has it whole).
func opValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 120
	if len(b) > most {
		return string(b[:most]) + "…"
	}
	return string(b)
}

// verifyHint is how to check with the server, "" when it was checked.
func verifyHint(verified bool, how string) string {
	if verified {
		return ""
	}
	return how
}
