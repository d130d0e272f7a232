package html_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	stdhtml "html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/html"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// hostile is what a label, an annotation or a manager's name may hold:
// on the page it is text.
const hostile = `<img src=x onerror=alert(1)></script><script>alert(2)</script>"'`

// loadObject reads a fixture of package render's tests.
func loadObject(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return u
}

func analyze(t testing.TB, u *unstructured.Unstructured, f ownership.Filter) *ownership.Report {
	t.Helper()
	r, err := ownership.Analyze(u, ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f.Apply(r)
}

// hostileObject is the Deployment fixture with hostile text in an
// annotation, a label, a value and a manager's name.
func hostileObject(t testing.TB) *unstructured.Unstructured {
	u := loadObject(t, "deployment.yaml")
	u.SetAnnotations(map[string]string{"example.com/note": hostile})
	labels := u.GetLabels()
	labels["evil"] = `</script>`
	u.SetLabels(labels)
	mf := u.GetManagedFields()
	mf[0].Manager = hostile
	u.SetManagedFields(mf)
	return u
}

// golden compares got with testdata/name, or rewrites it under -update.
// The style sheet and the hashes of the policy, the same on every page
// (checkPage checks them), are left out.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAll(got, []byte("<style>/* page/style.css */</style>"))
	got = regexp.MustCompile(`sha256-[A-Za-z0-9/&#;+=]+?=&#39;`).ReplaceAll(got, []byte("sha256-HASH&#39;"))
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/render/html -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got), run go test ./pkg/render/html -update if the change is intended:\n%s", file, diff)
	}
}

// checkPage checks what every page must be: one document whose style and
// script are the ones its Content-Security-Policy allows by hash, which
// allows nothing else, and no markup but the page's own.
func checkPage(t *testing.T, page string) {
	t.Helper()
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no Content-Security-Policy")
	}
	policy := stdhtml.UnescapeString(csp[1])
	if !strings.HasPrefix(policy, "default-src 'none';") {
		t.Errorf("the policy allows more than nothing by default: %s", policy)
	}
	for _, tag := range []string{"style", "script"} {
		m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(page, -1)
		if len(m) != 1 {
			t.Fatalf("%d <%s> elements, want 1", len(m), tag)
		}
		sum := sha256.Sum256([]byte(m[0][1]))
		if want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, want) {
			t.Errorf("the policy does not allow the page's %s (%s): %s", tag, want, policy)
		}
	}
	for _, bad := range []string{"<img", "<iframe", "http://", "https://", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}

func TestWhoOwns(t *testing.T) {
	tests := []struct {
		name    string
		objects []*ownership.Report
		opts    html.OwnersOptions
	}{
		{name: "who-owns-deployment", objects: []*ownership.Report{analyze(t, loadObject(t, "deployment.yaml"), ownership.Filter{})}},
		{name: "who-owns-filtered", objects: []*ownership.Report{analyze(t, loadObject(t, "deployment.yaml"), ownership.Filter{Shared: true})}},
		{name: "who-owns-none-match", objects: []*ownership.Report{analyze(t, loadObject(t, "configmap.yaml"), ownership.Filter{Managers: []string{"nobody"}})}, opts: html.OwnersOptions{Empty: "no field has two or more owners"}},
		{name: "who-owns-many", objects: []*ownership.Report{
			analyze(t, loadObject(t, "secret.yaml"), ownership.Filter{}),
			analyze(t, loadObject(t, "configmap.yaml"), ownership.Filter{}),
			analyze(t, loadObject(t, "configmap-no-managed-fields.yaml"), ownership.Filter{}),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := html.WhoOwns(&buf, tt.objects, tt.opts); err != nil {
				t.Fatal(err)
			}
			checkPage(t, buf.String())
			golden(t, tt.name+".html", buf.Bytes())
		})
	}
}

// A Secret's values are not on the page.
func TestWhoOwnsRedactsSecrets(t *testing.T) {
	u := loadObject(t, "secret.yaml")
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{analyze(t, u, ownership.Filter{})}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	if len(data) == 0 {
		t.Fatal("the fixture has no data")
	}
	for k, v := range data {
		if strings.Contains(buf.String(), v) {
			t.Errorf("the value of %s is on the page", k)
		}
	}
	if !strings.Contains(buf.String(), "&lt;redacted&gt;") {
		t.Error("no value says it is redacted")
	}
}

func TestWhoOwnsHostile(t *testing.T) {
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{analyze(t, hostileObject(t), ownership.Filter{})}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	checkPage(t, buf.String())
	if !strings.Contains(buf.String(), "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the hostile annotation is not on the page as text")
	}
}

// A value or manager holding a character that reorders or hides text
// (U+202E, a zero-width space) shows it escaped, as the text views do:
// the page shows what the object holds, not "abcwzfed" for
// "abc\u202edef\u200bzw".
func TestWhoOwnsInvisibleEscaped(t *testing.T) {
	u := loadObject(t, "deployment.yaml")
	u.SetAnnotations(map[string]string{"example.com/note": "abc\u202edef\u200bzw"})
	mf := u.GetManagedFields()
	mf[0].Manager = "ci\u2066bot\u2069"
	u.SetManagedFields(mf)
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{analyze(t, u, ownership.Filter{})}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkPage(t, page)
	for _, r := range page {
		if r == 0x202e || r == 0x200b || r == 0x2066 || r == 0x2069 {
			t.Errorf("the page holds %U raw", r)
		}
	}
	for _, want := range []string{`abc\u202edef\u200bzw`, `ci\u2066bot\u2069`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %s", want)
		}
	}
}

// A run that failed on some objects says so at the top of its page, with
// each error as text: a page kept alone (a CronJob's) is not taken for
// the whole answer.
func TestPageSaysIncomplete(t *testing.T) {
	r := analyze(t, loadObject(t, "configmap.yaml"), ownership.Filter{})
	var whole, partial bytes.Buffer
	if err := html.WhoOwns(&whole, []*ownership.Report{r}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(whole.String(), "Incomplete") {
		t.Error("a page of a run without errors says it is incomplete")
	}
	failed := []error{errors.New(`deployments.apps "<b>nope</b>" not found`)}
	if err := html.WhoOwns(&partial, []*ownership.Report{r}, html.OwnersOptions{}, failed...); err != nil {
		t.Fatal(err)
	}
	page := partial.String()
	checkPage(t, page)
	for _, want := range []string{"Incomplete: 1 error", `deployments.apps &#34;&lt;b&gt;nope&lt;/b&gt;&#34; not found`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page of a run with an error does not say %q", want)
		}
	}
}

// A field a manager owns that the object does not hold (a Secret's
// write-only stringData, stored as data) is on the page with its owner:
// the YAML has no line for it, and the legend counts it.
func TestWhoOwnsAbsentFields(t *testing.T) {
	u := loadObject(t, "secret.yaml")
	mf := u.GetManagedFields()
	vault := mf[0].DeepCopy()
	vault.Manager, vault.Operation = "vault", "Apply"
	vault.FieldsV1.SetRawString(`{"f:stringData":{"f:extra":{}}}`)
	u.SetManagedFields(append(mf, *vault))
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{analyze(t, u, ownership.Filter{})}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkPage(t, page)
	i := strings.Index(page, "Owned fields the object does not hold (1)")
	if i < 0 {
		t.Fatal("the page does not list the owned field the object does not hold")
	}
	if !strings.Contains(page[i:], "<code>.stringData.extra</code>") || !strings.Contains(page[i:], ">vault</span>") {
		t.Errorf("the list does not name .stringData.extra and its owner vault:\n%s", page[i:])
	}
}

// Over many objects, those a filter leaves nothing of are not shown, and
// the page says how many there are: not "No objects." when objects were
// read and matched nothing.
func TestWhoOwnsUnmatched(t *testing.T) {
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, nil, html.OwnersOptions{Empty: "no fields match", Unmatched: 2}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkPage(t, page)
	if strings.Contains(page, "No objects.") || !strings.Contains(page, "no fields match, in all 2 objects read") {
		t.Errorf("the page of 2 objects a filter matched nothing of does not say so:\n%s", page)
	}
	buf.Reset()
	r := analyze(t, loadObject(t, "configmap.yaml"), ownership.Filter{})
	if err := html.WhoOwns(&buf, []*ownership.Report{r}, html.OwnersOptions{Empty: "no fields match", Unmatched: 3}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "no fields match, in 3 more objects read (not shown)") {
		t.Errorf("the page does not say 3 more objects matched nothing")
	}
}
