package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/redact"
)

// Selection holds kubectl's object selection flags, the same for every
// command: TYPE[/NAME]..., -f (with -R), -k, -l, -A, and where a command
// allows them --local and --all-kinds.
type Selection struct {
	Files         resource.FilenameOptions
	LabelSelector string
	AllNamespaces bool
	Local         bool
	AllKinds      bool
	// In is what -f - reads (nil: the process's standard input).
	In io.Reader
	// CommandFlags are the connection flags given, for the commands its
	// errors suggest (Options.CommandFlags).
	CommandFlags []string

	allowLocal    bool
	allowAllKinds bool
}

// SelectionFlags say which of the optional flags a command offers.
type SelectionFlags struct {
	// What ends the help of -f and -k ("to inspect", "to migrate").
	What     string
	Local    bool
	AllKinds bool
}

// AddFlags declares the selection flags on a command.
func (s *Selection) AddFlags(fs *pflag.FlagSet, f SelectionFlags) {
	s.allowLocal, s.allowAllKinds = f.Local, f.AllKinds
	fs.StringSliceVarP(&s.Files.Filenames, "filename", "f", nil, "Files, directories or URLs with the objects "+f.What+" (- for standard input).")
	fs.BoolVarP(&s.Files.Recursive, "recursive", "R", false, "Process the directories of -f recursively.")
	fs.StringVarP(&s.Files.Kustomize, "kustomize", "k", "", "A kustomization directory with the objects "+f.What+".")
	fs.StringVarP(&s.LabelSelector, "selector", "l", "", "Label selector, as kubectl's (-l app=web,tier!=db).")
	fs.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "Select objects in all namespaces.")
	if f.Local {
		fs.BoolVar(&s.Local, "local", false, "Read the objects from -f/-k only, without contacting a cluster (save them with kubectl get -o yaml --show-managed-fields).")
	}
	if f.AllKinds {
		fs.BoolVar(&s.AllKinds, "all-kinds", false, "Every kind the server lists, found through discovery.")
	}
}

// HasFiles tells whether -f or -k was given.
func (s *Selection) HasFiles() bool {
	return len(s.Files.Filenames) > 0 || s.Files.Kustomize != ""
}

// Validate applies kubectl's rules to the selection.
func (s *Selection) Validate(args []string) error {
	if len(s.Files.Filenames) > 0 && s.Files.Kustomize != "" {
		return errors.New("only one of -f and -k can be given")
	}
	if s.LabelSelector != "" {
		// Read here, not only by a server: --local must not ignore a
		// selector it can't read.
		if _, err := labels.Parse(s.LabelSelector); err != nil {
			return fmt.Errorf("-l %q is not a label selector: %w (write it as kubectl's: -l app=web,tier!=db)", s.LabelSelector, err)
		}
	}
	if s.Local {
		if !s.HasFiles() {
			return errors.New("--local needs the objects in -f or -k")
		}
		if len(args) > 0 {
			return errors.New("--local reads -f/-k only: drop the TYPE/NAME arguments")
		}
	}
	if s.AllKinds {
		if len(args) > 0 || s.HasFiles() {
			return errors.New("--all-kinds selects every kind: drop the TYPE arguments and -f/-k")
		}
		return nil
	}
	if !s.HasFiles() && len(args) == 0 {
		hint := "TYPE NAME, TYPE/NAME, -f FILE, -k DIR or TYPE -l SELECTOR"
		if s.allowAllKinds {
			hint += ", or --all-kinds"
		}
		return fmt.Errorf("name the objects: %s (see --help)", hint)
	}
	if s.HasFiles() && len(args) > 0 {
		return errors.New("give either TYPE/NAME arguments or -f/-k, not both")
	}
	if names(args) {
		if s.LabelSelector != "" {
			return errors.New("name cannot be provided when a selector is specified: give TYPE -l SELECTOR or TYPE NAME, not both")
		}
		if s.AllNamespaces {
			return errors.New("a resource cannot be retrieved by name across all namespaces: drop -A or the names")
		}
	}
	return nil
}

// names tells whether the arguments name objects (TYPE NAME... or
// TYPE/NAME...) rather than whole kinds (TYPE[,TYPE...]).
func names(args []string) bool {
	if len(args) > 1 {
		return true
	}
	for _, a := range args {
		if strings.Contains(a, "/") {
			return true
		}
	}
	return false
}

// Resolve reads the selected objects whole, with their managedFields, and
// tells whether the selection names a single object (TYPE/NAME) rather
// than possibly many (TYPE, -l, -f): reports of the latter are Lists, as
// kubectl get's. When some objects are missing it returns the others with
// a *PartialError.
func (s *Selection) Resolve(ctx context.Context, getter genericclioptions.RESTClientGetter, args []string) ([]*unstructured.Unstructured, bool, error) {
	var b *resource.Builder
	if s.Local {
		var err error
		if b, err = withFiles(ctx, s.In, resource.NewLocalBuilder().Unstructured().Local(), false, &s.Files); err != nil {
			return nil, false, err
		}
	} else {
		ns, enforce, err := getter.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, false, err
		}
		b = resource.NewBuilder(getter).Unstructured().
			NamespaceParam(ns).DefaultNamespace().AllNamespaces(s.AllNamespaces).
			LabelSelectorParam(s.LabelSelector).
			ResourceTypeOrNameArgs(true, args...)
		if s.HasFiles() {
			// Objects named in files are read from the cluster.
			b = b.Latest()
		}
		if b, err = withFiles(ctx, s.In, b, enforce, &s.Files); err != nil {
			return nil, false, err
		}
	}
	// kubectl's builder takes no context: Ctrl-C returns at once, and the
	// requests in flight end with the process.
	type resolved struct {
		objs   []*unstructured.Unstructured
		single bool
		err    error
	}
	var scope func(schema.GroupResource) (bool, bool)
	if !s.Local {
		if m, err := getter.ToRESTMapper(); err == nil {
			scope = scopeOf(m)
		}
	}
	r, err := untilDone(ctx, func() resolved {
		objs, single, err := resolve(b, func(err error) error { return friendly(err, s.CommandFlags, scope) }, redact.FromContext(ctx))
		return resolved{objs, single, err}
	})
	if err != nil {
		return nil, false, err
	}
	if errors.Is(r.err, errNoMatch) && s.HasFiles() {
		return nil, false, ErrNoObjects
	}
	if s.Local && s.LabelSelector != "" && r.err == nil {
		return s.matching(r.objs)
	}
	return r.objs, r.single, r.err
}

// matching keeps the local objects -l selects, as a server would.
func (s *Selection) matching(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, bool, error) {
	sel, err := labels.Parse(s.LabelSelector)
	if err != nil {
		return nil, false, fmt.Errorf("-l %q is not a label selector: %w", s.LabelSelector, err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, false, fmt.Errorf("no object of -f/-k matches -l %s", s.LabelSelector)
	}
	return out, false, nil
}

var errNoMatch = errors.New("no objects matched the selection")

// untilDone returns what f returns, or ctx's error when ctx ends first;
// f, which takes no context (kubectl's builder, a read of standard
// input), then ends unobserved: its group is not waited for.
func untilDone[T any](ctx context.Context, f func() T) (T, error) {
	var (
		v    T
		g    errgroup.Group
		done = make(chan struct{})
	)
	g.Go(func() error {
		v = f()
		close(done)
		return nil
	})
	select {
	case <-done:
		_ = g.Wait()
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// resolve reads the objects b selects, as Resolve returns them; the
// Secrets among them are added to secrets.
func resolve(b *resource.Builder, friendly func(error) error, secrets *redact.Set) ([]*unstructured.Unstructured, bool, error) {
	single := false
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
		secrets.AddSecret(secretContent(u))
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
		return out, single, &PartialError{Err: friendly(utilerrors.NewAggregate(missing))}
	}
	if len(out) == 0 {
		return nil, false, errNoMatch
	}
	return out, single, nil
}

// ErrNoObjects: -f/-k gave nothing to work on (an empty file, "---"
// alone, an empty List, null), which every command refuses rather than
// pass on nothing checked.
var ErrNoObjects = errors.New("the input holds no objects: give -f/-k manifests with at least one object")

// Manifest is one object read from -f/-k and the file it came from.
type Manifest struct {
	Object *unstructured.Unstructured
	Source string
}

// ReadManifests reads objects from files, directories, URLs, standard
// input (in; nil: the process's) or a kustomization, without contacting
// a cluster. It stops reading standard input when ctx is done.
func ReadManifests(ctx context.Context, in io.Reader, files *resource.FilenameOptions) ([]Manifest, error) {
	b, err := withFiles(ctx, in, resource.NewLocalBuilder().Unstructured().Local(), false, files)
	if err != nil {
		return nil, err
	}
	return manifestsOf(b.Flatten().ContinueOnError().Do(), redact.FromContext(ctx))
}

// manifestsOf is the objects of a local builder's result, each Secret
// among them remembered by the run's Secret filter, secrets.
func manifestsOf(r *resource.Result, secrets *redact.Set) ([]Manifest, error) {
	if err := r.Err(); err != nil {
		return nil, Friendly(err)
	}
	infos, err := r.Infos()
	if err != nil {
		return nil, Friendly(err)
	}
	out := make([]Manifest, 0, len(infos))
	for _, i := range infos {
		u, ok := i.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("%s: unexpected object type %T", i.Source, i.Object)
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: an object without apiVersion or kind: fix the manifest", i.Source)
		}
		secrets.AddSecret(secretContent(u))
		out = append(out, Manifest{Object: u, Source: i.Source})
	}
	if len(out) == 0 {
		return nil, ErrNoObjects
	}
	return out, nil
}

// secretContent is the content of a Secret, nil for other kinds.
func secretContent(u *unstructured.Unstructured) map[string]any {
	if u.GetAPIVersion() == "v1" && u.GetKind() == "Secret" {
		return u.Object
	}
	return nil
}

// Resource is a kind and where it is served.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// ResourceOf is the Resource of a mapping.
func ResourceOf(m *meta.RESTMapping) Resource {
	return Resource{GVR: m.Resource, Kind: m.GroupVersionKind.Kind, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
}

// Item is one selected object as metadata (managedFields and annotations
// included), enough for everything that only rewrites managedFields.
type Item struct {
	Resource Resource
	Meta     *metav1.PartialObjectMetadata
}

// StreamOptions tune Stream.
type StreamOptions struct {
	// Verbs a kind must support to be walked by --all-kinds (list is
	// always needed).
	Verbs []string
	// ChunkSize is the page size of lists (default 500).
	ChunkSize int64
	// ResolveFirst reads every named object (TYPE NAME, -f, -k) before
	// yielding the first: a missing one is an error before any is
	// yielded (a command that writes then writes nothing).
	ResolveFirst bool
	// Concurrency is how many kinds are listed at once (default 1).
	// yield is still called by one lister at a time, in no set order.
	Concurrency int
}

// Kinds are the whole kinds a selection lists (TYPE, TYPE -l,
// --all-kinds) and the namespace they are listed in ("" for all).
type Kinds struct {
	Resources []Resource
	Namespace string
}

// Kinds resolves a selection of whole kinds (TYPE[,TYPE], --all-kinds,
// with -l and -A) to the resources to list and their namespace, checking
// the namespace exists: what Stream lists, the snapshot stores and the
// monitor watches. verbs are the verbs --all-kinds requires of a kind
// besides list. Named objects (TYPE NAME, -f, -k) are not kinds: ok is
// false and Stream reads them one by one.
func (s *Selection) Kinds(ctx context.Context, c *Cluster, args []string, verbs []string) (k Kinds, ok bool, err error) {
	k.Namespace = c.Namespace
	if s.AllNamespaces {
		k.Namespace = ""
	}
	switch {
	case s.AllKinds:
		if k.Resources, err = c.listableKinds(verbs, s.AllNamespaces); err != nil {
			return k, false, err
		}
	case s.HasFiles() || names(args):
		return k, false, nil
	default:
		for _, t := range strings.Split(args[0], ",") {
			m, err := c.MappingFor(t)
			if err != nil {
				return k, false, err
			}
			k.Resources = append(k.Resources, ResourceOf(m))
		}
	}
	if s.namespaced(k.Resources) {
		if err := c.CheckNamespace(ctx, k.Namespace); err != nil {
			return k, false, err
		}
	}
	return k, true, nil
}

// Stream yields the selected objects as metadata, calling yield for each:
// named objects (TYPE NAME, TYPE/NAME, -f, -k) are read one by one, whole
// kinds (TYPE, TYPE -l, --all-kinds) are listed metadata-only in chunks,
// so that memory stays flat however many objects there are. Kinds that
// --all-kinds could not list are returned as unlisted (the run is then
// partial); any other error stops the stream.
func (s *Selection) Stream(ctx context.Context, c *Cluster, args []string, o StreamOptions, yield func(Item) error) (unlisted []string, err error) {
	if o.ChunkSize == 0 {
		o.ChunkSize = 500
	}
	k, ok, err := s.Kinds(ctx, c, args, o.Verbs)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, s.streamNamed(ctx, c, args, o.ResolveFirst, yield)
	}
	if o.Concurrency <= 1 || len(k.Resources) <= 1 {
		for _, r := range k.Resources {
			if err := s.listKind(ctx, c, r, k.Namespace, o, yield, &unlisted); err != nil {
				return unlisted, err
			}
		}
		return unlisted, nil
	}
	return s.listSideBySide(ctx, c, k.Resources, k.Namespace, o, yield)
}

// listSideBySide lists kinds side by side, o.Concurrency at a time
// (within the client's rate limit); yield is called by one of them at a
// time. The first error stops the others.
func (s *Selection) listSideBySide(ctx context.Context, c *Cluster, kinds []Resource, ns string, o StreamOptions, yield func(Item) error) ([]string, error) {
	var mu, ymu sync.Mutex
	var unlisted []string
	one := func(it Item) error {
		ymu.Lock()
		defer ymu.Unlock()
		return yield(it)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Concurrency)
	for _, k := range kinds {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			var un []string
			err := s.listKind(gctx, c, k, ns, o, one, &un)
			mu.Lock()
			unlisted = append(unlisted, un...)
			mu.Unlock()
			return err
		})
	}
	err := g.Wait()
	sort.Strings(unlisted)
	return unlisted, err
}

// namespaced tells whether some of kinds are listed in one namespace.
func (s *Selection) namespaced(kinds []Resource) bool {
	for _, k := range kinds {
		if k.Namespaced && !s.AllNamespaces {
			return true
		}
	}
	return false
}

// listKind lists one kind in chunks, metadata only.
func (s *Selection) listKind(ctx context.Context, c *Cluster, k Resource, ns string, o StreamOptions, yield func(Item) error, unlisted *[]string) error {
	ri := c.Metadata.Resource(k.GVR)
	opts := &metav1.ListOptions{LabelSelector: s.LabelSelector, Limit: o.ChunkSize}
	err := resource.FollowContinue(opts, func(opts metav1.ListOptions) (runtime.Object, error) {
		var list *metav1.PartialObjectMetadataList
		var err error
		if k.Namespaced {
			list, err = ri.Namespace(ns).List(ctx, opts)
		} else {
			list, err = ri.List(ctx, opts)
		}
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if err := yield(Item{Resource: k, Meta: &list.Items[i]}); err != nil {
				return nil, err
			}
		}
		return list, nil
	})
	var api apierrors.APIStatus
	switch {
	case err == nil:
	case s.AllKinds && errors.As(err, &api):
		// One kind we may not list does not stop the others, but
		// the run is then partial.
		*unlisted = append(*unlisted, fmt.Sprintf("%s: %s", k.GVR.GroupResource(), api.Status().Message))
	case errors.As(err, &api):
		return fmt.Errorf("listing %s: %w", k.GVR.GroupResource(), c.Friendly(err))
	default:
		return err
	}
	return nil
}

// streamNamed reads named objects through kubectl's builder, which knows
// kubectl's argument forms, -f, -R and -k, and defaults namespaces.
func (s *Selection) streamNamed(ctx context.Context, c *Cluster, args []string, resolveFirst bool, yield func(Item) error) error {
	b, err := withFiles(ctx, s.In, resource.NewBuilder(c.Getter).Unstructured().
		NamespaceParam(c.Namespace).DefaultNamespace().
		ResourceTypeOrNameArgs(true, args...), c.Enforce, &s.Files)
	if err != nil {
		return err
	}
	type read struct {
		infos []*resource.Info
		err   error
	}
	r, err := untilDone(ctx, func() read {
		infos, err := b.RequireObject(false).Flatten().Do().Infos()
		return read{infos, err}
	})
	if err != nil {
		return err
	}
	infos := r.infos
	if r.err != nil {
		return c.Friendly(r.err)
	}
	if len(infos) == 0 {
		return ErrNoObjects
	}
	var resolved []Item
	for _, info := range infos {
		res := ResourceOf(info.Mapping)
		ri := c.Metadata.Resource(res.GVR)
		var m *metav1.PartialObjectMetadata
		if res.Namespaced {
			m, err = ri.Namespace(info.Namespace).Get(ctx, info.Name, metav1.GetOptions{})
		} else {
			m, err = ri.Get(ctx, info.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("%s/%s: %w", strings.ToLower(res.Kind), info.Name, c.Friendly(err))
		}
		if resolveFirst {
			resolved = append(resolved, Item{Resource: res, Meta: m})
			continue
		}
		if err := yield(Item{Resource: res, Meta: m}); err != nil {
			return err
		}
	}
	for _, it := range resolved {
		if err := yield(it); err != nil {
			return err
		}
	}
	return nil
}

// MappingFor resolves a TYPE argument as kubectl does: a resource, a short
// name, a kind, optionally with .group or .version.group.
func (c *Cluster) MappingFor(arg string) (*meta.RESTMapping, error) {
	m, err := mappingFor(c.Mapper, arg)
	if err != nil && meta.IsNoMatchError(err) {
		c.Refresh()
		m, err = mappingFor(c.Mapper, arg)
	}
	if err != nil {
		return nil, fmt.Errorf("the server doesn't have a resource type %q: list the known types with kubectl api-resources", arg)
	}
	return m, nil
}

func mappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullGVR != nil {
		gvk, _ = mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK == nil {
		gvk := gk.WithVersion("")
		fullGVK = &gvk
	}
	if !fullGVK.Empty() {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	return mapper.RESTMapping(gk)
}

// listableKinds finds through discovery every kind that supports list and
// verbs, at its preferred version. Without -A, cluster-scoped kinds are
// left out when -n was given.
func (c *Cluster) listableKinds(verbs []string, allNamespaces bool) ([]Resource, error) {
	lists, err := c.Discovery.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the server's resources: %w", c.Friendly(err))
	}
	var out []Resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
	next:
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !HasVerb(r, "list") {
				continue
			}
			for _, v := range verbs {
				if !HasVerb(r, v) {
					continue next
				}
			}
			if !r.Namespaced && !allNamespaces && c.Enforce {
				continue
			}
			out = append(out, Resource{GVR: gv.WithResource(r.Name), Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GVR.String() < out[j].GVR.String() })
	return out, nil
}
