// Command jsonschema writes the JSON Schema of every report kubectl-ssa
// prints with -o json or -o yaml into docs/schema/ (make schemas): scripts,
// GUIs and k9s plugins validate and consume the output against them. Its
// test fails when a report's Go type changed and the files were not
// written again.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
	"github.com/kubectl-ssa/kubectl-ssa/internal/jsonschema"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/handover"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// report is one document kind and the Go type it is marshalled from.
type report struct {
	kind, command string
	typ           reflect.Type
}

var reports = []report{
	{v1alpha1.OwnershipReportKind, "who-owns", reflect.TypeOf(v1alpha1.OwnershipReport{})},
	{conflict.ReportKind, "explain-conflict", reflect.TypeOf(conflict.Report{})},
	{diff.ReportKind, "diff", reflect.TypeOf(diff.Report{})},
	{handover.ReportKind, "handover", reflect.TypeOf(handover.Report{})},
	{migrate.ReportKind, "migrate", reflect.TypeOf(migrate.Report{})},
	{audit.ReportKind, "audit", reflect.TypeOf(audit.Report{})},
	{fight.Kind, "watch (one JSON document a line)", reflect.TypeOf(fight.Fight{})},
	{cmd.VersionKind, "version", reflect.TypeOf(cmd.VersionInfo{})},
}

func strs[T ~string](vals ...T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

// enums are the values of the typed string fields, from their constants.
var enums = map[string][]string{
	"v1alpha1.Action": strs(conflict.ActionCreate, conflict.ActionApply),
	"v1alpha1.Effect": strs(admission.Mutates, admission.MayMutate, admission.MayDeny, admission.MayWarn, admission.Audits, admission.Warns, admission.Denies, admission.Admits),
	"v1alpha1.AdmissionStepKind": strs(admission.Builtin, admission.ValidatingAdmissionPolicy, admission.MutatingAdmissionPolicy,
		admission.ValidatingWebhook, admission.MutatingWebhook),
	"v1alpha1.VerifyStatus": strs(conflict.VerifyAgrees, conflict.VerifyDiffers, conflict.VerifyRefused, conflict.VerifyNotRun, conflict.VerifyResolved),
	"v1alpha1.ChangeKind":   strs(diff.Modified, diff.Added, diff.Removed, diff.Reset, diff.Ownership),
	"v1alpha1.HandoverMode": strs(handover.ModeAuto, handover.ModeController, handover.ModeApplier, handover.ModeRelease),
	"v1alpha1.HandoverStatus": strs(handover.StatusPlanned, handover.StatusCompleted, handover.StatusAlreadyComplete, handover.StatusHeld,
		handover.StatusHandedOver, handover.StatusFailed),
	"v1alpha1.StepStatus": strs(handover.StepPlanned, handover.StepDone, handover.StepSkipped, handover.StepDryRun, handover.StepFailed, handover.StepTimedOut),
	"v1alpha1.StepName":   strs(handover.StepHold, handover.StepShare, handover.StepRelease, handover.StepWait, handover.StepCleanup, handover.StepLastApplied),
	"audit.Code":          strs(audit.Codes...),
	"audit.MarkKind":      strs(audit.MarkLabel, audit.MarkAnnotation),
	"audit.Severity":      strs(audit.SeverityInfo, audit.SeverityWarning, audit.SeverityError),
	"audit.FixMode":       strs(audit.FixAdopt, audit.FixForget),
	"write.DryRun":        strs(write.DryRunNone, write.DryRunClient, write.DryRunServer),
	"migrate.Result":      strs(migrate.ResultMigrated, migrate.ResultWouldMigrate, migrate.ResultUnchanged, migrate.ResultSkipped, migrate.ResultFailed, migrate.ResultNeedsWork),
	"migrate.Mode":        strs(migrate.ModeCSA, migrate.ModeRename, migrate.ModeRelease, migrate.ModeAPIVersions, migrate.ModeUndo),
	"remedy.Kind":         strs(remedy.Kinds...),
	"remedy.Tool":         strs(remedy.Tools...),
	"remedy.Edit":         strs(remedy.Edits...),
	"cmd.ServerSupport":   strs(cmd.ServerExact, cmd.ServerDiffers, cmd.ServerUntested),
}

// names are the names the schemas give the report types under $defs and
// in their titles: those of the packages that defined them before
// package v1alpha1 held them all (the published names stay).
var names = map[string]string{
	"v1alpha1.ObjectRef":       "ownership.ObjectRef",
	"v1alpha1.Owner":           "ownership.Owner",
	"v1alpha1.Manager":         "ownership.Manager",
	"v1alpha1.Field":           "ownership.Field",
	"v1alpha1.OwnershipReport": "ownership.Report",

	"v1alpha1.AdmissionReport": "admission.Report",
	"v1alpha1.AdmissionStep":   "admission.Step",
	"v1alpha1.AdmissionOp":     "admission.Op",

	"v1alpha1.ConflictReport": "conflict.Report",
	"v1alpha1.Conflict":       "conflict.Conflict",
	"v1alpha1.Retained":       "conflict.Retained",
	"v1alpha1.Refusal":        "conflict.Refusal",
	"v1alpha1.Reset":          "conflict.Reset",
	"v1alpha1.MaybeReset":     "conflict.MaybeReset",
	"v1alpha1.Verification":   "conflict.Verification",
	"v1alpha1.Autoscaler":     "conflict.Autoscaler",
	"v1alpha1.ReplicasHolder": "conflict.ReplicasHolder",

	"v1alpha1.DiffReport": "diff.Report",
	"v1alpha1.DiffChange": "diff.Change",
	"v1alpha1.Stay":       "diff.Stay",

	"v1alpha1.HandoverReport":  "handover.Report",
	"v1alpha1.HandoverStep":    "handover.Step",
	"v1alpha1.FieldState":      "handover.FieldState",
	"v1alpha1.LastAppliedEdit": "handover.LastAppliedEdit",

	"v1alpha1.MigrationReport":  "migrate.Report",
	"v1alpha1.ObjectResult":     "migrate.ObjectResult",
	"v1alpha1.MigrationSummary": "migrate.Summary",
	"v1alpha1.MigrationChange":  "migrate.Change",

	"v1alpha1.AuditReport":  "audit.Report",
	"v1alpha1.AuditSummary": "audit.Summary",
	"v1alpha1.CodeCount":    "audit.CodeCount",
	"v1alpha1.ManagerCount": "audit.ManagerCount",
	"v1alpha1.Finding":      "audit.Finding",
	"v1alpha1.Fix":          "audit.Fix",
	"v1alpha1.Evidence":     "audit.Evidence",
	"v1alpha1.EntryRef":     "audit.EntryRef",
	"v1alpha1.Mark":         "audit.Mark",

	"v1alpha1.Fight":  "fight.Fight",
	"v1alpha1.Writer": "fight.Writer",

	"v1alpha1.Version": "cmd.VersionInfo",
}

// published is the name of a type in the schemas.
func published(t reflect.Type) string {
	name := t.String()
	if n, ok := names[name]; ok {
		return n
	}
	return name
}

// schemas are the files to write, by name.
func schemas() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, r := range reports {
		s := jsonschema.Generate(r.typ, "https://kubectl-ssa.io/schema/v1alpha1/"+r.kind+".json",
			fmt.Sprintf("%s (%s), %s: the output of kubectl ssa %s -o json", r.kind, v1alpha1.GroupVersion, published(r.typ), r.command), enums, names)
		// Every report names its kind and the reports' apiVersion.
		s["properties"] = map[string]interface{}{
			"apiVersion": map[string]interface{}{"const": v1alpha1.GroupVersion},
			"kind":       map[string]interface{}{"const": r.kind},
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return nil, err
		}
		out[r.kind+".json"] = b.Bytes()
	}
	return out, nil
}

func main() {
	dir := "docs/schema"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files, err := schemas()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	for name, b := range files {
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonschema: "+err.Error())
		os.Exit(1)
	}
}
