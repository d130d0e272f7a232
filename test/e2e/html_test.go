package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	kubectlset "k8s.io/kubectl/pkg/cmd/set"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-ssa/kubectl-ssa/test/browser"
)

// hostileNote is an annotation that would be markup if a page pasted it.
const hostileNote = `<img src=x onerror=alert(1)></script><script>alert(2)</script>"'`

// hostilePageManager is a field manager's name that would be markup too.
const hostilePageManager = `<img src=x onerror=alert(3)>`

// pageSecretValue is a Secret's value that no page may hold, nor its base64.
const pageSecretValue = "hunter2-html-e2e"

var htmlDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/note: ` + strconv.Quote(hostileNote) + `
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

// kubectlSetImage is `kubectl set image TYPE/NAME CONTAINER=IMAGE`: the
// kubectl binary on PATH when there is one, else kubectl's own command in
// process (its field manager is kubectl-set either way).
func kubectlSetImage(t *testing.T, ns, resource, image string) {
	t.Helper()
	args := []string{"set", "image", "-n", ns, resource, image}
	if bin, err := exec.LookPath("kubectl"); err == nil {
		if out, err := exec.Command(bin, append(args, "--kubeconfig", env.kubeconfig)...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return
	}
	cf := genericclioptions.NewConfigFlags(true)
	cf.KubeConfig, cf.Namespace = &env.kubeconfig, &ns
	cf.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.UserAgent = "kubectl/v1.37.0 (linux/amd64) kubernetes/e2e"
		return c
	}
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}
	f := cmdutil.NewFactory(cf)
	cmd := kubectlset.NewCmdImage(f, streams)
	(&cobra.Command{Use: "kubectl"}).AddCommand(cmd)
	o := kubectlset.NewImageOptions(streams)
	err := o.Complete(f, cmd, []string{resource, image})
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		err = o.Run()
	}
	if err != nil {
		t.Fatalf("kubectl set image: %v\n%s", err, out.String())
	}
}

// shown is what a page showed in the browser: its text, the URLs it
// asked for, the dialogs it opened, its img and script elements.
type shown struct {
	text            string
	requests        []string
	dialogs         int
	images, scripts int
}

// screenshots is where the pages' screenshots go, for review:
// $SSA_SCREENSHOTS_DIR, or the test's temporary directory.
func screenshots(t *testing.T) string {
	if d := os.Getenv("SSA_SCREENSHOTS_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// load writes a page to a file, loads it from its file: URL in a new tab,
// and reads what it shows, what it asked for and a screenshot (name.png
// in dir); the page shows the hostile texts as text.
func load(t *testing.T, ctx context.Context, dir, name, html string, hostile ...string) shown {
	t.Helper()
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := browser.Open(ctx, file)
	if err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	defer cancel()
	var s shown
	if s.text, err = browser.Eval[string](tab, "document.body.innerText"); err != nil {
		t.Fatal(err)
	}
	if s.images, err = browser.Eval[int](tab, "document.querySelectorAll('img').length"); err != nil {
		t.Fatal(err)
	}
	if s.scripts, err = browser.Eval[int](tab, "document.querySelectorAll('script').length"); err != nil {
		t.Fatal(err)
	}
	// What a screen reader and a keyboard find: one h1 and one main
	// landmark, a skip link to it, headers in every table, a label on
	// every input.
	a11y, err := browser.Eval[string](tab, `[document.querySelectorAll("h1").length, document.querySelectorAll("main").length,
		document.querySelectorAll("a.skip[href='#main']").length, document.querySelectorAll("table:not(:has(th))").length,
		document.querySelectorAll("input:not(label input)").length].join(" ")`)
	if err != nil {
		t.Fatal(err)
	}
	if a11y != "1 1 1 0 0" {
		t.Errorf("%s: h1, main, skip link, tables without headers, inputs without a label: %s, want 1 1 1 0 0", name, a11y)
	}
	shoot(t, tab, dir, name)
	s.requests, s.dialogs = tab.Requests()
	for _, r := range s.requests {
		if r != tab.URL {
			t.Errorf("%s asked for %s: a page asks for nothing but itself", name, r)
		}
	}
	if len(s.requests) == 0 {
		t.Errorf("%s: no request seen, not even the page's own: is the listener deaf?", name)
	}
	if s.dialogs > 0 || s.images > 0 || s.scripts != 1 {
		t.Errorf("%s: %d dialogs, %d img and %d script elements, want none, none and the page's one: hostile text became markup", name, s.dialogs, s.images, s.scripts)
	}
	for _, h := range hostile {
		if !strings.Contains(s.text, h) {
			t.Errorf("%s does not show %q as text", name, h)
		}
	}
	for _, leak := range []string{pageSecretValue, base64.StdEncoding.EncodeToString([]byte(pageSecretValue))} {
		if strings.Contains(html, leak) {
			t.Errorf("%s holds a Secret's value (%s)", name, leak)
		}
	}
	return s
}

// shoot writes the page's screenshots, light (name.png) and dark
// (name-dark.png), and its print (name.pdf), for review; the page follows
// the system's dark mode.
func shoot(t *testing.T, tab *browser.Tab, dir, name string) {
	t.Helper()
	write := func(file string, b []byte, err error) {
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	png, err := tab.Screenshot()
	write(name+".png", png, err)
	pdf, err := tab.PDF()
	write(name+".pdf", pdf, err)
	background := `getComputedStyle(document.body).backgroundColor`
	light, err := browser.Eval[string](tab, background)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Dark(); err != nil {
		t.Fatal(err)
	}
	dark, err := browser.Eval[string](tab, background)
	if err != nil {
		t.Fatal(err)
	}
	if dark == light {
		t.Errorf("%s: the background is %s in dark mode as in light: the page does not follow the system", name, dark)
	}
	png, err = tab.Screenshot()
	write(name+"-dark.png", png, err)
}

// TestHTMLPages: the pages of who-owns, explain-conflict, diff and audit
// of objects that real writers wrote (a server-side applier, kubectl
// scale, kubectl set image, a Secret), loaded from files in Chromium:
// they show the managers, paths and findings, ask for nothing, keep a
// hostile annotation text, never hold the Secret's value; screenshots
// are written for review.
func TestHTMLPages(t *testing.T) {
	ns := namespace(t)
	ctx := browser.Start(t)
	dir := screenshots(t)
	apply(t, ns, "platform", htmlDeployment, false)
	apply(t, ns, "platform", "apiVersion: v1\nkind: Secret\nmetadata: {name: db, annotations: {example.com/note: "+strconv.Quote(hostileNote)+"}}\nstringData: {password: "+pageSecretValue+"}\n", false)
	kubectlScale(t, ns, "deployment/web", 3)
	kubectlSetImage(t, ns, "deployment/web", "web=nginx:1.28")
	patch(t, parse(t, strings.Replace(htmlDeployment, "name: web\n", "name: web\n  namespace: "+ns+"\n", 1)), hostilePageManager, `{"metadata":{"labels":{"team":"a"}}}`)
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	applied := strings.NewReplacer("nginx:1.27", "nginx:1.29", "replicas: 2", "replicas: 4", "  annotations:", "  labels: {team: b}\n  annotations:").Replace(htmlDeployment)
	if err := os.WriteFile(manifest, []byte(applied), 0o600); err != nil {
		t.Fatal(err)
	}

	page := mustSSA(t, 0, "who-owns", "-n", ns, "deployment/web", "-o", "html").stdout
	s := load(t, ctx, dir, "who-owns", page, hostileNote, hostilePageManager)
	for _, want := range []string{"platform", "kubectl-set", "Update", "scale", "nginx:1.28", "replicas: 3", "example.com/note"} {
		if !strings.Contains(s.text, want) {
			t.Errorf("who-owns' page does not show %q:\n%s", want, s.text)
		}
	}
	load(t, ctx, dir, "who-owns-secret", mustSSA(t, 0, "who-owns", "-n", ns, "secret/db", "-o", "html").stdout, hostileNote)

	s = load(t, ctx, dir, "explain-conflict", mustSSA(t, 1, "explain-conflict", "-n", ns, "-f", manifest, "--field-manager", "platform", "-o", "html").stdout, hostilePageManager)
	for _, want := range []string{"CONFLICT", ".spec.replicas", `.spec.template.spec.containers[name="web"].image`, "kubectl-set", "kubectl ssa handover", "--force-conflicts"} {
		if !strings.Contains(s.text, want) {
			t.Errorf("explain-conflict's page does not show %q:\n%s", want, s.text)
		}
	}
	s = load(t, ctx, dir, "diff", mustSSA(t, 1, "diff", "-n", ns, "-f", manifest, "--field-manager", "platform", "-o", "html").stdout, hostilePageManager)
	for _, want := range []string{"The apply fails", "image: nginx:1.29", "replicas: 4", "kubectl-set", "platform"} {
		if !strings.Contains(s.text, want) {
			t.Errorf("diff's page does not show %q:\n%s", want, s.text)
		}
	}
	checkSecretPages(t, ctx, dir, ns)
	checkAuditPage(t, ctx, dir, ns)
}

// checkSecretPages: explain-conflict's and diff's pages of an apply that
// changes the Secret's value hold neither value (load checks the live
// one).
func checkSecretPages(t *testing.T, ctx context.Context, dir, ns string) {
	t.Helper()
	const other = "other-html-e2e-value"
	manifest := filepath.Join(t.TempDir(), "db.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: "+other+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"explain-conflict", "diff"} {
		r := ssa(t, command, "-n", ns, "-f", manifest, "--field-manager", "ci", "-o", "html")
		if r.code != 1 {
			t.Fatalf("%s of the Secret: exit %d, want 1 (a conflict)\n%s", command, r.code, r.stderr)
		}
		s := load(t, ctx, dir, command+"-secret", r.stdout)
		if !strings.Contains(s.text, ".stringData.password") && !strings.Contains(s.text, ".data.password") {
			t.Errorf("%s's page of the Secret does not name its password:\n%s", command, s.text)
		}
		for _, leak := range []string{other, base64.StdEncoding.EncodeToString([]byte(other))} {
			if strings.Contains(r.stdout, leak) {
				t.Errorf("%s's page holds the applied Secret value (%s)", command, leak)
			}
		}
	}
}

// checkAuditPage: audit's page of the namespace shows the hand edits
// (kubectl scale, kubectl set image) as findings, with all contexts too,
// and its filters hide what they untick.
func checkAuditPage(t *testing.T, ctx context.Context, dir, ns string) {
	t.Helper()
	r := ssa(t, "audit", "-n", ns, "-o", "html")
	if r.code != 1 {
		t.Fatalf("audit: exit %d, want 1 (findings)\n%s", r.code, r.stderr)
	}
	s := load(t, ctx, dir, "audit", r.stdout)
	for _, want := range []string{"manual-edit", "Deployment/web", "kubectl-set", ".spec.replicas", "Namespace " + ns, "kubectl ssa handover", "findings shown"} {
		if !strings.Contains(s.text, want) {
			t.Errorf("audit's page does not show %q:\n%s", want, s.text)
		}
	}
	all := ssa(t, "audit", "-n", ns, "--all-contexts", "-o", "html")
	if all.code != 1 {
		t.Fatalf("audit --all-contexts: exit %d, want 1\n%s", all.code, all.stderr)
	}
	if s := load(t, ctx, dir, "audit-all-contexts", all.stdout); !strings.Contains(s.text, "Cluster ") || !strings.Contains(s.text, "manual-edit") {
		t.Errorf("audit --all-contexts' page shows no cluster's findings:\n%s", s.text)
	}
	// Unticking every severity hides every finding: the filters work.
	tab, cancel, err := browser.Open(ctx, filepath.Join(dir, "audit.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	status, err := browser.Eval[string](tab, `(function(){document.querySelectorAll("input[name=severity]").forEach(function(i){i.click()});return document.querySelector(".shown").textContent})()`)
	if err != nil {
		t.Fatal(err)
	}
	visible, err := browser.Eval[int](tab, `Array.from(document.querySelectorAll("tr.f")).filter(function(r){return r.offsetParent!==null}).length`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(status, "0 of ") || visible != 0 {
		t.Errorf("with no severity ticked the page says %q and shows %d findings, want 0", status, visible)
	}
}

// TestHTMLLongNames: a manager's name of 128 characters without a space
// (the longest the apiserver takes) wraps in its table: the page is no
// wider than the window, nothing is pushed off it.
func TestHTMLLongNames(t *testing.T) {
	ctx := browser.Start(t)
	dir := screenshots(t)
	long := strings.Repeat("m", 128)
	obj := `apiVersion: v1
kind: ConfigMap
metadata:
  name: long
  namespace: shop
  managedFields:
  - {manager: ` + long + `, operation: Apply, apiVersion: v1, time: "2026-01-02T03:04:05Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, time: "2026-01-02T03:04:05Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:b": {}}}}
data: {a: "1", b: "2"}
`
	file := filepath.Join(t.TempDir(), "long.yaml")
	if err := os.WriteFile(file, []byte(obj), 0o600); err != nil {
		t.Fatal(err)
	}
	page := mustSSA(t, 0, "who-owns", "--local", "-f", file, "-o", "html").stdout
	load(t, ctx, dir, "who-owns-long", page, "kubectl-edit")
	tab, cancel, err := browser.Open(ctx, filepath.Join(dir, "who-owns-long.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	widths, err := browser.Eval[string](tab, `document.documentElement.scrollWidth + " " + document.documentElement.clientWidth`)
	if err != nil {
		t.Fatal(err)
	}
	var wide, window int
	if _, err := fmt.Sscan(widths, &wide, &window); err != nil || wide > window {
		t.Errorf("the page is %d pixels wide in a window of %d: a long name pushes the tables off it (%v)", wide, window, err)
	}
}

// TestHTMLIncomplete: a run that fails on one of its objects still
// writes the page of the others, exits 2, and the page says at its top
// that it is incomplete and why: kept alone, it is not taken for the
// whole answer.
func TestHTMLIncomplete(t *testing.T) {
	ns := namespace(t)
	ctx := browser.Start(t)
	dir := screenshots(t)
	apply(t, ns, "platform", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: \"1\"}\n", false)
	r := ssa(t, "who-owns", "-n", ns, "configmap/app", "configmap/nope", "-o", "html")
	if r.code != 2 || !strings.Contains(r.stderr, `"nope" not found`) {
		t.Fatalf("who-owns of a missing object: exit %d, want 2, and an error on stderr:\n%s", r.code, r.stderr)
	}
	s := load(t, ctx, dir, "who-owns-incomplete", r.stdout, "platform")
	for _, want := range []string{"Incomplete: 1 error", `configmaps "nope" not found`, "ConfigMap/" + ns + "/app"} {
		if !strings.Contains(s.text, want) {
			t.Errorf("the page of a run that failed on one object does not show %q:\n%s", want, s.text)
		}
	}
}

// TestHTMLObjectsList: the list of objects atop a page of several keeps
// each entry whole in its column: an entry's end is not at the top of
// the next column.
func TestHTMLObjectsList(t *testing.T) {
	ns := namespace(t)
	ctx := browser.Start(t)
	dir := screenshots(t)
	files := t.TempDir()
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-settings-of-the-shop, namespace: " + ns + "}\ndata: {a: \"1\"}\n"
		if err := os.WriteFile(filepath.Join(files, name+".yaml"), []byte(cm), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	page := mustSSA(t, 0, "explain-conflict", "-f", files, "--field-manager", "platform", "-o", "html").stdout
	load(t, ctx, dir, "explain-conflict-list", page, "alpha-settings-of-the-shop")
	tab, cancel, err := browser.Open(ctx, filepath.Join(dir, "explain-conflict-list.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	split, err := browser.Eval[int](tab, `Array.from(document.querySelectorAll("nav li")).filter(function(li){return li.getClientRects().length > 1}).length`)
	if err != nil {
		t.Fatal(err)
	}
	if split > 0 {
		t.Errorf("%d entries of the list of objects are split between two columns", split)
	}
}
