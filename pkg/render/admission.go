package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

// mayDo words what a step whose effect is not known may do.
var mayDo = map[admission.Effect]string{admission.MayDeny: "deny the apply", admission.MayMutate: "change the object", admission.MayWarn: "warn"}

// admissionLines say what admission does to the apply, one line a step,
// and whether the prediction is exact; bad tells the lines that make it
// not exact. check is how the user has the server's dry run check it
// ("": it was checked).
func admissionLines(a *admission.Report, check string) (lines []string, bad []bool) {
	if a == nil {
		return nil, nil
	}
	add := func(l string, b bool) {
		lines = append(lines, l)
		bad = append(bad, b)
	}
	for _, s := range a.Steps {
		what := fmt.Sprintf("%s %s", s.Kind, Escape(s.Name))
		if s.Kind == admission.Builtin {
			what = "plugin " + Escape(s.Name)
			if strings.Contains(s.Name, "+") {
				what = "plugins " + Escape(strings.ReplaceAll(s.Name, "+", ", "))
			}
		}
		var l string
		switch {
		case s.Effect == admission.Mutates:
			var ops []string
			owner := "owned by no one"
			for _, op := range s.Ops {
				path := "." + strings.Join(op.Path, ".")
				switch op.Op {
				case admission.OpAppend:
					ops = append(ops, fmt.Sprintf("adds %s to %s", Escape(opValue(op.Value)), Escape(path)))
				case admission.OpRemove:
					ops = append(ops, "removes "+Escape(path))
				default:
					ops = append(ops, fmt.Sprintf("sets %s to %s", Escape(path), Escape(quotedValue(op.Value))))
				}
				if op.Atomic {
					owner = "owned by the applier with the rest of the atomic list: its next apply without it removes it"
				}
			}
			if s.Kind == admission.MutatingAdmissionPolicy {
				owner = "evaluated here; the server records no manager for admission's changes"
			}
			l = fmt.Sprintf("admission: %s %s (%s; in the prediction)", what, strings.Join(ops, ", "), owner)
		case s.Effect == admission.Warns:
			l = fmt.Sprintf("admission: %s warns: %s", what, Escape(s.Message))
		case s.Effect == admission.Denies:
			// The message is the denial's, said once where it is.
			l = fmt.Sprintf("admission: %s denies the apply", what)
		case s.Effect == admission.Audits && s.Message != "":
			l = fmt.Sprintf("admission: %s audits: %s", what, Escape(s.Message))
		case s.Effect == admission.Audits:
			l = fmt.Sprintf("admission: %s matches: it only audits", what)
		case s.Effect == admission.Admits:
			l = fmt.Sprintf("admission: %s admits the apply (evaluated here)", what)
		case s.Kind == admission.Builtin:
			// A built-in plugin always acts; it is its effect that is not
			// known here.
			l = fmt.Sprintf("admission: %s may %s", what, mayDo[s.Effect])
		default:
			l = fmt.Sprintf("admission: %s matches: it may %s (not evaluated here)", what, mayDo[s.Effect])
		}
		if len(s.Caveats) > 0 {
			l += "; " + Escape(strings.Join(s.Caveats, "; "))
		}
		add(l, s.Effect != admission.Mutates && s.Effect != admission.Audits && s.Effect != admission.Admits)
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

// quotedValue is a set value: a string quoted, anything else as JSON.
func quotedValue(v interface{}) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return opValue(v)
}

// opValue is an appended value as written: a string as it is (a
// finalizer), anything else as JSON (a taint).
func opValue(v interface{}) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
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
