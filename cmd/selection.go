package cmd

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/resource"
)

// selection holds kubectl's object selection flags.
type selection struct {
	files         resource.FilenameOptions
	labelSelector string
	allNamespaces bool
	local         bool
}

func (s *selection) addFlags(fs *pflag.FlagSet, what string, local bool) {
	fs.StringSliceVarP(&s.files.Filenames, "filename", "f", nil, "Files, directories or URLs with the objects "+what+" (- for standard input).")
	fs.BoolVarP(&s.files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	fs.StringVarP(&s.files.Kustomize, "kustomize", "k", "", "A kustomization directory with the objects "+what+".")
	fs.StringVarP(&s.labelSelector, "selector", "l", "", "Label selector, as kubectl's (-l app=web,tier!=db).")
	fs.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "Select objects in all namespaces.")
	if local {
		fs.BoolVar(&s.local, "local", false, "Read the objects from -f/-k only, without contacting a cluster (save them with kubectl get -o yaml --show-managed-fields).")
	}
}

func (s *selection) validate(args []string) error {
	hasFiles := len(s.files.Filenames) > 0 || s.files.Kustomize != ""
	if len(s.files.Filenames) > 0 && s.files.Kustomize != "" {
		return errors.New("only one of -f and -k can be given")
	}
	if s.local {
		if !hasFiles {
			return errors.New("--local needs the objects in -f or -k")
		}
		if len(args) > 0 {
			return errors.New("--local reads -f/-k only: drop the TYPE/NAME arguments")
		}
	}
	if !hasFiles && len(args) == 0 {
		return errors.New("name the objects: TYPE NAME, TYPE/NAME, -f FILE, -k DIR or TYPE -l SELECTOR (see --help)")
	}
	if hasFiles && len(args) > 0 {
		return errors.New("give either TYPE/NAME arguments or -f/-k, not both")
	}
	return nil
}

// objects resolves the selection into objects, with their managedFields.
func (s *selection) objects(g *globalOptions, args []string) ([]*unstructured.Unstructured, error) {
	objs, _, err := s.resolve(g, args)
	return objs, err
}

// resolve is objects, and whether the selection names a single object
// (TYPE/NAME) rather than possibly many (TYPE, -l, -f): reports of the
// latter are always Lists, as kubectl get's.
func (s *selection) resolve(g *globalOptions, args []string) ([]*unstructured.Unstructured, bool, error) {
	single := false
	var b *resource.Builder
	if s.local {
		b = resource.NewLocalBuilder().Unstructured().Local()
	} else {
		ns, enforce, err := g.configFlags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, false, err
		}
		b = resource.NewBuilder(g.configFlags).Unstructured().
			NamespaceParam(ns).DefaultNamespace().AllNamespaces(s.allNamespaces).
			LabelSelectorParam(s.labelSelector).
			ResourceTypeOrNameArgs(true, args...)
		if len(s.files.Filenames) > 0 || s.files.Kustomize != "" {
			// Objects named in files are read from the cluster.
			b = b.Latest()
		}
		b = b.FilenameParam(enforce, &s.files)
	}
	if s.local {
		b = b.FilenameParam(false, &s.files)
	}
	r := b.ContinueOnError().Flatten().Do().IntoSingleItemImplied(&single)
	if err := r.Err(); err != nil {
		return nil, false, friendly(err)
	}
	var out []*unstructured.Unstructured
	var missing []error
	err := r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			// Like kubectl get: show what exists, then say what doesn't.
			if apierrors.IsNotFound(err) {
				missing = append(missing, err)
				return nil
			}
			return err
		}
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("%s: unexpected object type %T", info.ObjectName(), info.Object)
		}
		out = append(out, u)
		return nil
	})
	single = single && len(out) <= 1
	if err != nil {
		// ContinueOnError gathers the errors of single objects: keep
		// what was found when all of them are "not found".
		errs := []error{err}
		var agg utilerrors.Aggregate
		if errors.As(err, &agg) {
			errs = agg.Errors()
		}
		for _, e := range errs {
			if !apierrors.IsNotFound(e) {
				return nil, false, friendly(err)
			}
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		if len(out) == 0 {
			return nil, false, friendly(utilerrors.NewAggregate(missing))
		}
		return out, single, &partialError{err: friendly(utilerrors.NewAggregate(missing))}
	}
	if len(out) == 0 {
		return nil, false, errors.New("no objects matched the selection")
	}
	return out, single, nil
}

// partialError: some selected objects were found, others were not.
type partialError struct{ err error }

func (e *partialError) Error() string { return e.err.Error() }

var refusedVerb = regexp.MustCompile(`cannot (\w+) resource`)

// friendly rewrites the errors people hit most into one line that says
// what to do next.
func friendly(err error) error {
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) && len(agg.Errors()) > 0 {
		msgs := make([]string, 0, len(agg.Errors()))
		for _, e := range agg.Errors() {
			msgs = append(msgs, friendly(e).Error())
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: check the name and the namespace (-n)", err)
	case apierrors.IsForbidden(err):
		verb := "get"
		if m := refusedVerb.FindStringSubmatch(err.Error()); m != nil {
			verb = m[1]
		}
		return fmt.Errorf("%w: this needs %s permission (check with kubectl auth can-i %s ...), or use another --context/--as", err, verb, verb)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: the credentials were refused; check --kubeconfig/--context", err)
	case meta.IsNoMatchError(err) || strings.Contains(err.Error(), "doesn't have a resource type"):
		return fmt.Errorf("%w: list the known types with kubectl api-resources", err)
	}
	return err
}
