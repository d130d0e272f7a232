package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// A changed Secret value shows as changed, numbered as watch numbers a
// fight's values, "<redacted> #n" (issue 35: it read "<redacted>" on both sides), and no
// value reaches the text view or the report; an unchanged one reads the
// same on both sides.
func TestDiffSecretValueChange(t *testing.T) {
	live := loadObject(t, "secret.yaml")
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	applied := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "shop"},
		"data":     map[string]any{"password": "czNjcjN0LW5ldw==", "username": "YWRtaW4="}}}
	r, err := conflict.Explain(context.Background(), src, applied, conflict.Options{FieldManager: "kubectl-client-side-apply", AlsoForced: true})
	if err != nil {
		t.Fatal(err)
	}
	target := remedy.Target{ResourceArg: "secret/db", Namespace: "shop", FieldManager: "kubectl-client-side-apply"}
	d, err := diff.Compute(r, diff.Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.Diff(&buf, d.Report, d.Live, d.Result, render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"-  password: '<redacted> #1'", "+  password: '<redacted> #2'"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text view does not say %q:\n%s", want, text)
		}
	}
	js, err := json.Marshal(d.Report)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"aHVudGVyMg", "czNjcjN0LW5ldw", "hunter2", "s3cr3t-new"} {
		if strings.Contains(text, leak) || strings.Contains(string(js), leak) {
			t.Errorf("a Secret value (%s) reached the output", leak)
		}
	}
	for _, c := range d.Report.Changes {
		if c.Path.String() == ".data.password" && (c.Before != "<redacted> #1" || c.After != "<redacted> #2") {
			t.Errorf("the change reads %v -> %v, want <redacted> #1 -> <redacted> #2", c.Before, c.After)
		}
	}
	if got := d.Report.Live["data"].(map[string]any)["password"]; got != "<redacted> #1" {
		t.Errorf("the live object's password reads %v (the external diff's file)", got)
	}
	if got := d.Report.Result["data"].(map[string]any)["password"]; got != "<redacted> #2" {
		t.Errorf("the result's password reads %v (the external diff's file)", got)
	}
}
