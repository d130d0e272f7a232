package sarif_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review/reviewtest"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/sarif"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestGolden(t *testing.T) {
	reviewtest.Golden(t, "sarif", *update, sarif.Write)
}

// TestResults checks what code scanning reads: one result per problem,
// at the manifest's line of its field, with the rule it names.
func TestResults(t *testing.T) {
	docs := reviewtest.Documents(t)
	var buf bytes.Buffer
	if err := sarif.Write(&buf, docs["conflict"]); err != nil {
		t.Fatal(err)
	}
	var log sarif.Log
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	type at struct {
		rule, field, uri string
		line             int
	}
	var got []at
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result of %s points at rule %d, %s", r.RuleID, r.RuleIndex, run.Tool.Driver.Rules[r.RuleIndex].ID)
		}
		l := r.Locations[0]
		got = append(got, at{r.RuleID, l.LogicalLocations[0].Name, l.PhysicalLocation.ArtifactLocation.URI, l.PhysicalLocation.Region.StartLine})
	}
	want := []at{
		{"conflict", ".spec.replicas", "deploy/web.yaml", 7},
		{"conflict", `.spec.template.spec.containers[name="web"].image`, "deploy/web.yaml", 18},
		{"conflict", `.spec.template.spec.containers[name="web"].image`, "deploy/web.yaml", 18},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(at{})); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	fp := map[string]bool{}
	for _, r := range run.Results {
		fp[r.PartialFingerprints["kubectlSsaProblem/v1"]] = true
	}
	if len(fp) != len(run.Results) {
		t.Errorf("%d fingerprints for %d results: two owners' conflicts on one field must differ", len(fp), len(run.Results))
	}
}

// TestNotFromAFile: an object read from standard input has no file to
// point at: its results name it and its field, with no physical location.
func TestNotFromAFile(t *testing.T) {
	var buf bytes.Buffer
	if err := sarif.Write(&buf, reviewtest.Documents(t)["hostile"]); err != nil {
		t.Fatal(err)
	}
	var log sarif.Log
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs[0].Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range log.Runs[0].Results {
		if r.Locations[0].PhysicalLocation != nil {
			t.Errorf("%s: a physical location for an object from standard input", r.Message.Text)
		}
	}
}
