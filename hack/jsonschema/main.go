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

	"github.com/kubectl-ssa/kubectl-ssa/internal/jsonschema"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// report is one document kind and the Go type it is marshalled from.
type report struct {
	kind, command string
	typ           reflect.Type
}

var reports = []report{
	{v1alpha1.OwnershipReportKind, "who-owns", reflect.TypeOf(v1alpha1.OwnershipReport{})},
	{v1alpha1.ConflictReportKind, "explain-conflict", reflect.TypeOf(v1alpha1.ConflictReport{})},
	{v1alpha1.DiffReportKind, "diff", reflect.TypeOf(v1alpha1.DiffReport{})},
	{v1alpha1.HandoverReportKind, "handover", reflect.TypeOf(v1alpha1.HandoverReport{})},
	{v1alpha1.MigrationReportKind, "migrate", reflect.TypeOf(v1alpha1.MigrationReport{})},
	{v1alpha1.AuditReportKind, "audit", reflect.TypeOf(v1alpha1.AuditReport{})},
	{v1alpha1.FightKind, "watch (one JSON document a line)", reflect.TypeOf(v1alpha1.Fight{})},
	{v1alpha1.VersionKind, "version", reflect.TypeOf(v1alpha1.Version{})},
	{v1alpha1.SnapshotKind, "snapshot (the file, gzip-compressed)", reflect.TypeOf(v1alpha1.Snapshot{})},
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
	"v1alpha1.Action": strs(v1alpha1.ActionCreate, v1alpha1.ActionApply),
	"v1alpha1.Effect": strs(v1alpha1.EffectMutates, v1alpha1.EffectMayMutate, v1alpha1.EffectMayDeny, v1alpha1.EffectMayWarn,
		v1alpha1.EffectAudits, v1alpha1.EffectWarns, v1alpha1.EffectDenies, v1alpha1.EffectAdmits),
	"v1alpha1.AdmissionStepKind": strs(v1alpha1.BuiltinPlugin, v1alpha1.ValidatingAdmissionPolicy, v1alpha1.MutatingAdmissionPolicy,
		v1alpha1.ValidatingWebhook, v1alpha1.MutatingWebhook),
	"v1alpha1.VerifyStatus": strs(v1alpha1.VerifyAgrees, v1alpha1.VerifyDiffers, v1alpha1.VerifyRefused, v1alpha1.VerifyNotRun, v1alpha1.VerifyResolved),
	"v1alpha1.ChangeKind":   strs(v1alpha1.ChangeModified, v1alpha1.ChangeAdded, v1alpha1.ChangeRemoved, v1alpha1.ChangeReset, v1alpha1.ChangeOwnership),
	"v1alpha1.HandoverMode": strs(v1alpha1.HandoverAuto, v1alpha1.HandoverController, v1alpha1.HandoverApplier, v1alpha1.HandoverRelease),
	"v1alpha1.HandoverStatus": strs(v1alpha1.HandoverPlanned, v1alpha1.HandoverCompleted, v1alpha1.HandoverAlreadyComplete, v1alpha1.HandoverHeld,
		v1alpha1.HandoverHandedOver, v1alpha1.HandoverFailed),
	"v1alpha1.StepStatus": strs(v1alpha1.StepPlanned, v1alpha1.StepDone, v1alpha1.StepSkipped, v1alpha1.StepDryRun, v1alpha1.StepFailed, v1alpha1.StepTimedOut),
	"v1alpha1.StepName":   strs(v1alpha1.StepHold, v1alpha1.StepShare, v1alpha1.StepRelease, v1alpha1.StepWait, v1alpha1.StepCleanup, v1alpha1.StepLastApplied),
	"v1alpha1.Code":       strs(audit.Codes...),
	"v1alpha1.MarkKind":   strs(v1alpha1.MarkLabel, v1alpha1.MarkAnnotation),
	"v1alpha1.Severity":   strs(v1alpha1.SeverityInfo, v1alpha1.SeverityWarning, v1alpha1.SeverityError),
	"v1alpha1.FixMode":    strs(v1alpha1.FixAdopt, v1alpha1.FixForget),
	"v1alpha1.DryRun":     strs(v1alpha1.DryRunNone, v1alpha1.DryRunClient, v1alpha1.DryRunServer),
	"v1alpha1.MigrationResult": strs(v1alpha1.ResultMigrated, v1alpha1.ResultWouldMigrate, v1alpha1.ResultUnchanged, v1alpha1.ResultSkipped,
		v1alpha1.ResultFailed, v1alpha1.ResultNeedsWork),
	"v1alpha1.MigrationMode": strs(v1alpha1.MigrateCSA, v1alpha1.MigrateRename, v1alpha1.MigrateRelease, v1alpha1.MigrateAPIVersions, v1alpha1.MigrateUndo),
	"remedy.Kind":            strs(remedy.Kinds...),
	"remedy.Tool":            strs(remedy.Tools...),
	"remedy.Edit":            strs(remedy.Edits...),
	"v1alpha1.ServerSupport": strs(v1alpha1.ServerExact, v1alpha1.ServerDiffers, v1alpha1.ServerUntested),
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
		s["properties"] = map[string]any{
			"apiVersion": map[string]any{"const": v1alpha1.GroupVersion},
			"kind":       map[string]any{"const": r.kind},
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
