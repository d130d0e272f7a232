package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects the pull-request outputs are checked on: a Deployment an
// applier applies, then scaled by hand; a ConfigMap whose key a manager
// named as markup owns with a value that is markup; a Secret another
// manager owns with a value that must never be printed.
const (
	prDeployment     = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}`
	prConfigMap      = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"mode":"</code></summary></details><script>alert(1)</script> | [x](javascript:alert(1))"}}`
	prSecret         = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"password":"prout-live-s3cret-value"}}`
	prHostileManager = `<img src=x onerror=alert(1)>**m**`
	prSecretValue    = "prout-live-s3cret-value"
	// The input, as a reviewer's pull request has it: comments, and the
	// fields that conflict on lines of their own.
	prManifest = `# web: the shop's front end
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  # three, whatever kubectl scale said
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.27
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  password: prout-manifest-s3cret-value
`
)

// lineOf is the 1-based line of the first line of text that holds s,
// at or after line from.
func lineOf(t *testing.T, text, s string, from int) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if i+1 >= from && strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", s)
	return 0
}

// TestPROutputs: diff and explain-conflict of a manifest file against
// real state (a server-side applier, kubectl scale, a manager named as
// markup, a Secret), and audit of a hand edit, in the formats made for
// pull requests: the SARIF validates against the official 2.1.0 schema
// and points at the lines of the input's fields; the Markdown renders
// with a CommonMark renderer and the page holds what the reports say, no
// markup of the cluster's and no Secret value; the JUnit parses, one
// failure per problem.
func TestPROutputs(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "deployer", prDeployment, false)
	kubectlScale(t, ns, "deployment/web", 5)
	apply(t, ns, prHostileManager, prConfigMap, false)
	apply(t, ns, "vault-sync", prSecret, false)
	file := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(file, []byte(prManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{ // field -> its line in the file
		".spec.replicas":       lineOf(t, prManifest, "replicas: 3", 1),
		`.data.mode`:           lineOf(t, prManifest, "mode: fast", 1),
		`.stringData.password`: lineOf(t, prManifest, "password:", 1),
	}

	for _, command := range []string{"diff", "explain-conflict"} {
		t.Run(command, func(t *testing.T) {
			r := mustSSA(t, 1, command, "-n", ns, "-f", file, "--field-manager", "deployer", "-o", "json")
			conflicts := conflictCount(t, r.stdout)
			if conflicts < 3 {
				t.Fatalf("%d conflicts, want those of replicas (kubectl scale), mode and password:\n%s", conflicts, r.stdout)
			}
			s := mustSSA(t, 1, command, "-n", ns, "-f", file, "--field-manager", "deployer", "-o", "sarif")
			checkSARIF(t, s.stdout, "file://"+filepath.ToSlash(file), want, conflicts)
			m := mustSSA(t, 1, command, "-n", ns, "-f", file, "--field-manager", "deployer", "-o", "markdown")
			page := checkMarkdown(t, m.stdout, "Deployment/"+ns+"/web", ".spec.replicas", "kubectl", prHostileManager, "ConfigMap/"+ns+"/settings")
			if !strings.Contains(page, "shop.yaml line "+strconv.Itoa(want[".spec.replicas"])) {
				t.Errorf("the comment does not give the line of .spec.replicas in the file:\n%s", m.stdout)
			}
			j := mustSSA(t, 1, command, "-n", ns, "-f", file, "--field-manager", "deployer", "-o", "junit")
			if failures := checkJUnit(t, j.stdout); failures != conflicts {
				t.Errorf("%d failures for %d conflicts:\n%s", failures, conflicts, j.stdout)
			}
			for _, out := range []string{s.stdout, m.stdout, j.stdout} {
				if strings.Contains(out, prSecretValue) || strings.Contains(out, "prout-manifest-s3cret-value") {
					t.Errorf("a Secret's value is printed:\n%s", out)
				}
			}
		})
	}

	t.Run("controlled reset", func(t *testing.T) {
		// An autoscaled Deployment whose manifest drops .spec.replicas:
		// the apply resets what the HPA sets, a field the file does not
		// hold, so the result is at the line of the deepest part it
		// holds (spec:), not exact.
		apply(t, ns, "deployer", strings.Replace(strings.Replace(prDeployment, `"web"`, `"api"`, 1), `"replicas":2,`, `"replicas":3,`, 1), false)
		apply(t, ns, "deployer", `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"api"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},"minReplicas":3,"maxReplicas":5}}`, false)
		manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n"
		api := filepath.Join(t.TempDir(), "api.yaml")
		if err := os.WriteFile(api, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		s := mustSSA(t, 5, "explain-conflict", "-n", ns, "-f", api, "--field-manager", "deployer", "-o", "sarif")
		log := validSARIF(t, s.stdout)
		var resets int
		for _, r := range log.Runs[0].Results {
			if r.RuleID != "controlled-reset" {
				t.Errorf("a %s result: %+v", r.RuleID, r)
				continue
			}
			resets++
			l := r.Locations[0]
			if l.LogicalLocations[0].Name != ".spec.replicas" || l.PhysicalLocation == nil || l.PhysicalLocation.Region == nil ||
				l.PhysicalLocation.Region.StartLine != lineOf(t, manifest, "spec:", 1) || r.Level != "warning" || r.Properties.ExactLine == nil || *r.Properties.ExactLine {
				b, _ := json.Marshal(r)
				t.Errorf("the reset of .spec.replicas: want a warning at spec:'s line %d, not exact; got %s", lineOf(t, manifest, "spec:", 1), b)
			}
		}
		if resets != 1 {
			t.Errorf("%d controlled resets, want 1:\n%s", resets, s.stdout)
		}
	})

	t.Run("standard input", func(t *testing.T) {
		s := ssaIn(t, prManifest, "diff", "-n", ns, "-f", "-", "--field-manager", "deployer", "-o", "sarif")
		if s.code != 1 {
			t.Fatalf("exit %d: %s", s.code, s.stderr)
		}
		log := validSARIF(t, s.stdout)
		for _, r := range log.Runs[0].Results {
			if r.Locations[0].PhysicalLocation != nil {
				t.Errorf("a file location for an object read from standard input: %+v", r.Locations[0])
			}
		}
	})

	t.Run("audit", func(t *testing.T) {
		// A hand edit of what the applier applies.
		cm := apply(t, ns, "deployer", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"edited"},"data":{"a":"1"}}`, false)
		cm.Object["data"] = map[string]any{"a": "2"}
		if _, err := env.dynamic.Resource(cmGVR).Namespace(ns).Update(context.Background(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		r := mustSSA(t, 1, "audit", "configmaps", "-n", ns, "-o", "json")
		findings := len(auditJSONFindings(t, r.stdout))
		s := mustSSA(t, 1, "audit", "configmaps", "-n", ns, "-o", "sarif")
		log := validSARIF(t, s.stdout)
		if got := len(log.Runs[0].Results); got != findings {
			t.Errorf("%d results for %d findings", got, findings)
		}
		m := mustSSA(t, 1, "audit", "configmaps", "-n", ns, "-o", "markdown")
		checkMarkdown(t, m.stdout, "ConfigMap/"+ns+"/edited", "manual-edit", "kubectl-edit", ".data.a")
		j := mustSSA(t, 1, "audit", "configmaps", "-n", ns, "-o", "junit")
		if failures := checkJUnit(t, j.stdout); failures != findings {
			t.Errorf("%d failures for %d findings", failures, findings)
		}
	})
}

func conflictCount(t *testing.T, out string) int {
	t.Helper()
	var doc struct {
		Kind      string           `json:"kind"`
		Conflicts []any            `json:"conflicts"`
		Items     []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	n := len(doc.Conflicts)
	for _, it := range doc.Items {
		cs, _ := it["conflicts"].([]any)
		n += len(cs)
	}
	return n
}

func auditJSONFindings(t *testing.T, out string) []any {
	t.Helper()
	var doc struct {
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Findings
}

// sarifLog is what the test reads of a SARIF log.
type sarifLog struct {
	Runs []struct {
		Results []struct {
			RuleID     string `json:"ruleId"`
			Level      string `json:"level"`
			Properties struct {
				ExactLine *bool `json:"exactLine"`
			} `json:"properties"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name string `json:"name"`
				} `json:"logicalLocations"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

var (
	sarifSchemaOnce sync.Once
	sarifSchema     *jsonschema.Schema
	sarifSchemaErr  error
)

// validSARIF validates out against the official SARIF 2.1.0 schema kept
// in pkg/render/sarif/testdata, and reads it.
func validSARIF(t *testing.T, out string) sarifLog {
	t.Helper()
	sarifSchemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		sarifSchema, sarifSchemaErr = c.Compile(filepath.Join(repoRoot(), "pkg", "render", "sarif", "testdata", "sarif-schema-2.1.0.json"))
	})
	if sarifSchemaErr != nil {
		t.Fatal(sarifSchemaErr)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := sarifSchema.Validate(doc); err != nil {
		t.Fatalf("not SARIF 2.1.0: %v\n%s", err, out)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs", len(log.Runs))
	}
	return log
}

// checkSARIF: valid, one result per conflict, each in uri at the line of
// its field.
func checkSARIF(t *testing.T, out, uri string, lines map[string]int, conflicts int) {
	t.Helper()
	log := validSARIF(t, out)
	n := 0
	for _, r := range log.Runs[0].Results {
		if r.RuleID != "conflict" {
			continue
		}
		n++
		l := r.Locations[0]
		field := l.LogicalLocations[0].Name
		if l.PhysicalLocation == nil || l.PhysicalLocation.Region == nil {
			t.Errorf("%s: no file and line", field)
			continue
		}
		if got := l.PhysicalLocation.ArtifactLocation.URI; got != uri {
			t.Errorf("%s: in %s, want %s", field, got, uri)
		}
		if want, ok := lines[field]; !ok || l.PhysicalLocation.Region.StartLine != want {
			t.Errorf("%s: at line %d, want %d", field, l.PhysicalLocation.Region.StartLine, want)
		}
	}
	if n != conflicts {
		t.Errorf("%d conflict results for %d conflicts", n, conflicts)
	}
}

var htmlTag = regexp.MustCompile(`<[a-zA-Z/][^>]*>`)

// checkMarkdown renders the comment with goldmark (CommonMark, GitHub's
// tables and strikethrough; raw HTML kept, as GitHub keeps the tags it
// allows): the page's text holds each of texts; the only tags are the
// comment's own; it fits a GitHub comment. It returns the page's text.
func checkMarkdown(t *testing.T, out string, texts ...string) string {
	t.Helper()
	if len(out) > 65536 {
		t.Errorf("a comment of %d bytes, over GitHub's 65,536", len(out))
	}
	var page bytes.Buffer
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := md.Convert([]byte(out), &page); err != nil {
		t.Fatal(err)
	}
	for _, tag := range htmlTag.FindAllString(page.String(), -1) {
		name := strings.Fields(strings.Trim(tag, "</>"))[0]
		switch name {
		case "h3", "h4", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "p", "code", "strong", "details", "summary", "br", "hr":
		default:
			t.Errorf("the page holds a tag the comment did not write: %s", tag)
		}
	}
	text := htmlTextOf(page.String())
	for _, s := range texts {
		if !strings.Contains(text, s) {
			t.Errorf("the rendered comment lacks %q:\n%s", s, text)
		}
	}
	return text
}

// htmlTextOf is the page's text: tags removed, entities read.
func htmlTextOf(page string) string {
	s := htmlTag.ReplaceAllString(page, "")
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

// checkJUnit parses out and returns its failures, checking the counts
// agree with the cases.
func checkJUnit(t *testing.T, out string) int {
	t.Helper()
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	cases, failures := 0, 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				failures++
			}
		}
	}
	if cases != doc.Tests || failures != doc.Failures {
		t.Errorf("tests=%d failures=%d, but %d cases, %d failures", doc.Tests, doc.Failures, cases, failures)
	}
	return failures
}

// TestSARIFGoldenFilesValidate: the renderer's golden files are SARIF
// 2.1.0 too (what the unit tests pin, the schema checks).
func TestSARIFGoldenFilesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(), "pkg", "render", "sarif", "testdata", "*.sarif"))
	if err != nil || len(files) < 4 {
		t.Fatalf("golden files: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		validSARIF(t, string(b))
	}
}
