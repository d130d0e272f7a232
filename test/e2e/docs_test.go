package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// The examples of README.md and docs/*.md are run here, so that they
// can't go stale. An example is a ```console block right after a marker
//
//	<!-- example: setup=NAME -->
//
// (or <!-- example: --> for one that needs no setup).
// Its lines that start with "$ kubectl ssa " are commands (run as the
// built binary, "kubectl ssa X" -> "kubectl-ssa X", from a directory that
// holds the setup's files); the lines after each command are what it
// prints, standard error first, then standard output. A command ending in
// "; echo $?" prints its exit code last, as a shell does. A line "..."
// stands for any number of lines. Times, ages, uids and resourceVersions
// are compared as placeholders. Every ```console block must be an
// example.
//
// NAME is test/e2e/testdata/docs/NAME.yaml: the writes that make the state
// the example starts from (see docSetupStep), made in a fresh namespace,
// the namespace of the kubeconfig's context the commands use. Its name has
// the length of "shop" (so that tables keep their widths) and reads
// "shop" in what the commands print.
//
// SSA_DOCS_UPDATE=1 rewrites each command's output in the docs with what it
// printed (review the diff before committing it).

const docsNamespace = "shop"

var exampleMarker = regexp.MustCompile(`^<!--\s*example:\s*(.*?)\s*-->$`)

// docExample is one ```console block of a doc.
type docExample struct {
	file  string // relative to the repository root
	line  int    // of the ``` that opens it, 1-based
	setup string
	// first and end are the indices of the block's first line and of its
	// closing ``` in the file's lines.
	first, end int
	commands   []docCommand
}

type docCommand struct {
	text     string // after "$ "
	args     []string
	echoExit bool
	want     []string
}

// docSetupStep is one write of a setup. Exactly one of the kinds is set.
type docSetupStep struct {
	// Apply server-side applies Manifest as this manager (Force forces).
	Apply string `json:"apply,omitempty"`
	Force bool   `json:"force,omitempty"`
	// Create creates Manifest as this manager (kubectl create, a Helm 3
	// install).
	Create string `json:"create,omitempty"`
	// KubectlApply runs kubectl's own client-side apply of Manifest.
	KubectlApply bool `json:"kubectlApply,omitempty"`
	// Patch sends the merge patch Body as this manager to Manifest's
	// object (its apiVersion, kind and name), to Subresource if set.
	Patch       string `json:"patch,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Body        string `json:"body,omitempty"`
	// Scale is kubectl scale RESOURCE --replicas=Replicas.
	Scale    string `json:"scale,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
	// HelmRelease installs Manifest (a render, documents after "---"
	// lines) as revision 1 of this Helm release: the objects written by
	// "helm" as Helm 4 applies them (ServerSide) or as Helm 3 creates
	// them, and the release's Secret.
	HelmRelease string `json:"helmRelease,omitempty"`
	ServerSide  bool   `json:"serverSide,omitempty"`
	// File writes Manifest to this file of the commands' directory.
	File string `json:"file,omitempty"`
	// Loop repeats its steps (applies and patches), one every Every,
	// while the example's commands run: a fight for watch to see.
	Loop  []docSetupStep `json:"loop,omitempty"`
	Every string         `json:"every,omitempty"`

	Manifest string `json:"manifest,omitempty"`
}

func TestDocs(t *testing.T) {
	root := repoRoot()
	// The examples run in directories of their own: read the schemas
	// their reports are checked against from here.
	if _, err := loadSchemas(); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	update := os.Getenv("SSA_DOCS_UPDATE") != ""
	total := 0
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		examples, err := parseDocExamples(rel, lines)
		if err != nil {
			t.Error(err)
			continue
		}
		total += len(examples)
		checkDocCommandLines(t, rel, lines)
		checkDocLinks(t, root, rel, lines)
		got := map[int][]string{}
		for _, ex := range examples {
			t.Run(fmt.Sprintf("%s:%d", rel, ex.line), func(t *testing.T) {
				got[ex.first] = runDocExample(t, ex, update)
			})
		}
		if update {
			writeDocUpdate(t, f, lines, examples, got)
		}
	}
	if total == 0 {
		t.Fatal("no examples found in README.md and docs/*.md")
	}
}

// checkDocCommandLines checks that every "kubectl ssa ..." line of the
// file's ```sh blocks names a command and flags that exist: the binary
// reads them with --help added, which needs no cluster.
func checkDocCommandLines(t *testing.T, file string, lines []string) {
	t.Helper()
	inSh := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "```") {
			inSh = !inSh && l == "```sh"
			continue
		}
		at := strings.Index(l, "kubectl ssa ")
		if !inSh || at < 0 {
			continue
		}
		line := i + 1
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
		}
		words, err := shellWords(shellCommand(l[at:]))
		if err != nil {
			t.Errorf("%s:%d: %v", file, line, err)
			continue
		}
		args := append(words[2:], "--help")
		out, err := exec.Command(env.plugin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s:%d: %s: %v\n%s", file, line, strings.Join(words, " "), err, out)
		}
	}
}

var (
	docLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	docHeading = regexp.MustCompile(`^#+ (.*)$`)
)

// checkDocLinks checks that every relative link of the file, outside code
// blocks, names a file that exists and, in a Markdown file, a heading it
// has (as GitHub makes anchors of headings).
func checkDocLinks(t *testing.T, root, file string, lines []string) {
	t.Helper()
	for i, l := range proseLines(lines) {
		for _, m := range docLink.FindAllStringSubmatch(l, -1) {
			target, frag, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(root, file)
			if target != "" {
				path = filepath.Join(root, filepath.Dir(file), target)
			}
			data, err := os.ReadFile(path)
			var perr *os.PathError
			if errors.As(err, &perr) && strings.Contains(perr.Err.Error(), "is a directory") {
				continue
			}
			if err != nil {
				t.Errorf("%s:%d: a link to %s: %v", file, i+1, m[1], err)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !docAnchors(string(data))[frag] {
				t.Errorf("%s:%d: a link to %s: no such heading", file, i+1, m[1])
			}
		}
	}
}

// proseLines is lines with those of code blocks blanked.
func proseLines(lines []string) []string {
	out := make([]string, len(lines))
	code := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			code = !code
			continue
		}
		if !code {
			out[i] = l
		}
	}
	return out
}

// docAnchors are the anchors GitHub gives the headings of a Markdown text.
func docAnchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range proseLines(strings.Split(text, "\n")) {
		if m := docHeading.FindStringSubmatch(l); m != nil {
			h := notInSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
			out[strings.ReplaceAll(h, " ", "-")] = true
		}
	}
	return out
}

// shellCommand is s up to where a shell would end the command: an
// unquoted |, ;, &, > or a # comment.
func shellCommand(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case strings.IndexByte("|;&>", c) >= 0, c == '#' && i > 0 && s[i-1] == ' ':
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// parseDocExamples finds the examples of one file.
func parseDocExamples(file string, lines []string) ([]docExample, error) {
	var out []docExample
	marker, marked := "", false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if m := exampleMarker.FindStringSubmatch(l); m != nil {
			marker, marked = m[1], true
			continue
		}
		if !strings.HasPrefix(l, "```") {
			if l != "" {
				marked = false
			}
			continue
		}
		lang := strings.TrimPrefix(l, "```")
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: unterminated code block", file, i+1)
		}
		if lang == "console" {
			if !marked {
				return nil, fmt.Errorf("%s:%d: a console block without an <!-- example: setup=NAME --> marker right before it", file, i+1)
			}
			ex, err := parseDocExample(file, i, end, marker, lines)
			if err != nil {
				return nil, err
			}
			out = append(out, ex)
		}
		marked = false
		i = end
	}
	return out, nil
}

func parseDocExample(file string, open, end int, marker string, lines []string) (docExample, error) {
	ex := docExample{file: file, line: open + 1, first: open + 1, end: end}
	for _, kv := range strings.Fields(marker) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "setup":
			ex.setup = v
		default:
			return ex, fmt.Errorf("%s:%d: unknown example attribute %q", file, open, k)
		}
	}
	for i := open + 1; i < end; i++ {
		l := lines[i]
		cmdText, isCmd := strings.CutPrefix(l, "$ ")
		if !isCmd {
			if len(ex.commands) == 0 {
				return ex, fmt.Errorf("%s:%d: output before the first $ command", file, i+1)
			}
			c := &ex.commands[len(ex.commands)-1]
			c.want = append(c.want, l)
			continue
		}
		c := docCommand{text: cmdText}
		body := cmdText
		if b, ok := strings.CutSuffix(body, "; echo $?"); ok {
			body, c.echoExit = b, true
		}
		words, err := shellWords(body)
		if err != nil {
			return ex, fmt.Errorf("%s:%d: %w", file, i+1, err)
		}
		if len(words) < 2 || words[0] != "kubectl" || words[1] != "ssa" {
			return ex, fmt.Errorf("%s:%d: an example runs kubectl ssa only: %q", file, i+1, cmdText)
		}
		c.args = words[2:]
		ex.commands = append(ex.commands, c)
	}
	if len(ex.commands) == 0 {
		return ex, fmt.Errorf("%s:%d: an example without a $ kubectl ssa command", file, open+1)
	}
	return ex, nil
}

// shellWords splits a command line as a POSIX shell does, for the quoting
// examples use: single quotes, double quotes and backslashes. Anything
// else a shell would read specially is refused.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte(`"\$`+"`", s[j+1]) >= 0 {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j == len(s) {
				return nil, errors.New("unterminated double quote")
			}
			i = j
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case strings.IndexByte("|&;<>()$`*?[#~", c) >= 0:
			return nil, fmt.Errorf("%q needs a shell: quote it", c)
		default:
			cur.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// docsKubeconfig is the test bed's kubeconfig with the namespace ns.
func docsKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("the test bed's kubeconfig has no current context")
	}
	ctx.Namespace = ns
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}

// runDocExample makes the example's state, runs its commands and compares
// what they print; it returns what they printed, as the doc's lines.
func runDocExample(t *testing.T, ex docExample, update bool) []string {
	steps := readDocSetup(t, ex.setup)
	t.Chdir(t.TempDir())
	ns := docsExampleNamespace(t)
	kubeconfig := docsKubeconfig(t, ns)
	var loops []docSetupStep
	for i, s := range steps {
		if s.Loop != nil {
			loops = append(loops, s)
			continue
		}
		runDocSetupStep(t, ns, i, s)
	}
	settleDocsDeployments(t, ns)
	for _, l := range loops {
		startDocLoop(t, ns, l)
	}
	var lines []string
	for _, c := range ex.commands {
		got := runDocCommand(t, ns, kubeconfig, c)
		lines = append(lines, "$ "+c.text)
		lines = append(lines, got...)
		if update {
			continue
		}
		if diff := compareDocOutput(c.want, got); diff != "" {
			t.Errorf("%s:%d: $ %s\n%s\n(SSA_DOCS_UPDATE=1 rewrites the doc with what it printed)", ex.file, ex.line, c.text, diff)
		}
	}
	return lines
}

func runDocCommand(t *testing.T, ns, kubeconfig string, c docCommand) []string {
	t.Helper()
	r := ssaEnv(t, []string{"KUBECONFIG=" + kubeconfig}, c.args...)
	code := r.code
	if !c.echoExit && code != 0 {
		t.Errorf("$ %s: exit %d; show it with \"; echo $?\" if it is meant\n%s%s", c.text, code, r.stderr, r.stdout)
	}
	var lines []string
	for _, s := range []string{r.stderr, r.stdout} {
		if s = strings.TrimRight(s, "\n"); s != "" {
			lines = append(lines, strings.Split(s, "\n")...)
		}
	}
	if c.echoExit {
		lines = append(lines, strconv.Itoa(code))
	}
	// The private HOME (backups go there) as a reader's, the example's
	// namespace as the docs name it.
	word := regexp.MustCompile(`\b` + ns + `\b`)
	for i, l := range lines {
		lines[i] = word.ReplaceAllString(strings.ReplaceAll(l, os.Getenv("HOME"), "~"), docsNamespace)
	}
	return lines
}

var docVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d{8}T\d{6}Z\b`), "<stamp>"},
	{regexp.MustCompile(`\bgo1\.\d+(\.\d+)?\b`), "<go>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`(?i)(resourceVersion"?:?\s*"?)\d+`), "${1}<rv>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "<clock>"},
	{regexp.MustCompile(`\b\d+(\.\d+)?/min\b`), "<rate>/min"},
	// Ages: a table's last column, "(Apply, 3s)" in the blame and
	// handover views.
	{regexp.MustCompile(`\b(\d+[smhd])+(\)|\s*$)`), "<age>$2"},
}

func normalizeDocLine(l string) string {
	for _, v := range docVolatile {
		l = v.re.ReplaceAllString(l, v.with)
	}
	return strings.TrimRight(l, " ")
}

// compareDocOutput says how got differs from want ("" when it matches),
// a want line "..." matching any number of got lines.
func compareDocOutput(want, got []string) string {
	if matchDocLines(want, got) {
		return ""
	}
	return "the doc shows:\n" + indentLines(want) + "\nthe command printed:\n" + indentLines(got)
}

func matchDocLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for k := 0; k <= len(got); k++ {
			if matchDocLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && normalizeDocLine(want[0]) == normalizeDocLine(got[0]) && matchDocLines(want[1:], got[1:])
}

func indentLines(ls []string) string {
	return "    " + strings.Join(ls, "\n    ")
}

func readDocSetup(t *testing.T, name string) []docSetupStep {
	t.Helper()
	if name == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(), "test", "e2e", "testdata", "docs", name+".yaml"))
	if err != nil {
		t.Fatalf("the example's setup: %v", err)
	}
	var steps []docSetupStep
	if err := yaml.UnmarshalStrict(data, &steps); err != nil {
		t.Fatalf("testdata/docs/%s.yaml: %v", name, err)
	}
	return steps
}

func runDocSetupStep(t *testing.T, ns string, i int, s docSetupStep) {
	t.Helper()
	switch {
	case s.Apply != "":
		apply(t, ns, s.Apply, s.Manifest, s.Force)
	case s.Create != "":
		create(t, ns, s.Create, s.Manifest)
	case s.KubectlApply:
		kubectlApply(t, ns, s.Manifest)
	case s.Patch != "":
		u := parse(t, s.Manifest)
		u.SetNamespace(ns)
		var sub []string
		if s.Subresource != "" {
			sub = []string{s.Subresource}
		}
		patch(t, u, s.Patch, s.Body, sub...)
	case s.Scale != "":
		kubectlScale(t, ns, s.Scale, s.Replicas)
	case s.HelmRelease != "":
		helmWrite(t, ns, s.HelmRelease, s.Manifest, s.ServerSide)
		method := ""
		if s.ServerSide {
			method = "ssa"
		}
		helmReleaseSecret(t, ns, s.HelmRelease, 1, "deployed", method, s.Manifest)
	case s.File != "":
		if err := os.WriteFile(s.File, []byte(s.Manifest), 0o600); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("setup step %d does nothing", i+1)
	}
}

// startDocLoop runs a Loop step in the background until the example ends.
func startDocLoop(t *testing.T, ns string, l docSetupStep) {
	t.Helper()
	every, err := time.ParseDuration(l.Every)
	if err != nil {
		t.Fatalf("loop every %q: %v", l.Every, err)
	}
	var writes []func() error
	for _, s := range l.Loop {
		u := parse(t, s.Manifest)
		setNamespace(t, u, ns)
		res := resourceFor(t, u)
		switch {
		case s.Apply != "":
			writes = append(writes, func() error {
				_, err := res.Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: s.Apply, Force: s.Force})
				return err
			})
		case s.Patch != "":
			var sub []string
			if s.Subresource != "" {
				sub = []string{s.Subresource}
			}
			writes = append(writes, func() error {
				_, err := res.Patch(context.Background(), u.GetName(), types.MergePatchType, []byte(s.Body), metav1.PatchOptions{FieldManager: s.Patch}, sub...)
				return err
			})
		default:
			t.Fatal("a loop applies and patches only")
		}
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			if err := writes[i%len(writes)](); err != nil {
				done <- err
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("the example's loop: %v", err)
		}
	})
}

// settleDocsDeployments waits until the Deployment controller has written
// the status of every Deployment of the setup, so that what the examples
// print does not depend on when they run.
func settleDocsDeployments(t *testing.T, ns string) {
	t.Helper()
	list, err := env.client.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Items {
		settle(t, objRef("apps/v1", "Deployment", ns, d.Name))
	}
}

// docsExampleNamespace creates a namespace for one example, named as long
// as "shop" (letters that are not hex digits, so that no uid holds it),
// with its default service account, and deletes it at the end.
func docsExampleNamespace(t *testing.T) string {
	t.Helper()
	const letters = "ghjkmnpqrstvwxyz"
	nss := env.client.CoreV1().Namespaces()
	for {
		b := []byte{'z', 0, 0, 0}
		for i := 1; i < len(b); i++ {
			b[i] = letters[rand.Intn(len(letters))]
		}
		ns := string(b)
		_, err := nss.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nss.Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		waitDefaultServiceAccount(t, ns, time.Now().Add(30*time.Second))
		return ns
	}
}

// writeDocUpdate replaces each example's block with what its commands
// printed.
func writeDocUpdate(t *testing.T, file string, lines []string, examples []docExample, got map[int][]string) {
	t.Helper()
	var out []string
	prev := 0
	for _, ex := range examples {
		g, ok := got[ex.first]
		if !ok {
			continue
		}
		out = append(out, lines[prev:ex.first]...)
		out = append(out, g...)
		prev = ex.end
	}
	out = append(out, lines[prev:]...)
	if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
