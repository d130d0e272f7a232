package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// externalArg is what kubectl accepts as an argument of
// KUBECTL_EXTERNAL_DIFF.
var externalArg = regexp.MustCompile(`^[a-zA-Z0-9-=]+$`)

// externalDiffPrinter is diff's printer with KUBECTL_EXTERNAL_DIFF
// (spec): it keeps the reports and flush runs the program on them all;
// the program's answer (answer) is the run's, not a failure to print.
type externalDiffPrinter struct {
	spec   string
	o      *diffOptions
	kept   []*v1alpha1.DiffReport
	answer error
}

func (p *externalDiffPrinter) print(d *diff.Computed, _ bool) error {
	p.kept = append(p.kept, d.Report)
	return nil
}

func (p *externalDiffPrinter) flush(_, _ bool) error {
	if len(p.kept) > 0 {
		p.answer = runExternalDiff(p.spec, p.kept, p.o)
	}
	return nil
}

// runExternalDiff does what kubectl diff does with KUBECTL_EXTERNAL_DIFF:
// the objects before and after go to two directories, one file each
// named group.version.kind.namespace.name, and the program compares the
// directories. Its exit status 0 or 1 is ours; above 1 is an error.
func runExternalDiff(spec string, reports []*v1alpha1.DiffReport, o *diffOptions) error {
	words := strings.Fields(spec)
	for _, a := range words[1:] {
		if !externalArg.MatchString(a) {
			return fmt.Errorf("KUBECTL_EXTERNAL_DIFF: the argument %q is not allowed: arguments may hold letters, digits, '-' and '=' only, as kubectl requires", a)
		}
	}
	dir, err := os.MkdirTemp("", "kubectl-ssa-diff-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	liveDir, mergedDir := filepath.Join(dir, "LIVE"), filepath.Join(dir, "MERGED")
	for _, d := range []string{liveDir, mergedDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	for _, r := range reports {
		gv, _ := schema.ParseGroupVersion(r.Object.APIVersion)
		name := strings.Join([]string{gv.Group, gv.Version, r.Object.Kind, r.Object.Namespace, r.Object.Name}, ".")
		name = strings.TrimPrefix(strings.ReplaceAll(name, "/", "_"), ".")
		if err := writeObject(filepath.Join(liveDir, name), r.Live); err != nil {
			return err
		}
		if err := writeObject(filepath.Join(mergedDir, name), r.Result); err != nil {
			return err
		}
	}
	c := exec.Command(words[0], append(words[1:], liveDir, mergedDir)...) //nolint:gosec // the user's own diff program, as kubectl runs it
	c.Stdout, c.Stderr = o.streams.Out, o.streams.ErrOut
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return exit(CodeFound)
	}
	return fmt.Errorf("KUBECTL_EXTERNAL_DIFF %s: %w", words[0], err)
}

// writeObject writes an object as YAML without its managedFields, as
// kubectl diff does; nothing for a nil object (the apply creates it).
func writeObject(file string, obj map[string]any) error {
	if obj == nil {
		return nil
	}
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	u.SetManagedFields(nil)
	b, err := render.MarshalYAML(u.Object)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o600)
}
