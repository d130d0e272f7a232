package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/redact"
	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
)

// HelmStorage is the kind of object Helm keeps releases in, chosen by
// HELM_DRIVER as Helm chooses it.
type HelmStorage string

// The storages kubectl-ssa reads.
const (
	HelmSecrets    HelmStorage = "Secret"
	HelmConfigMaps HelmStorage = "ConfigMap"
)

// HelmStorageFor is the storage HELM_DRIVER names: secret (the default)
// or configmap. Helm's memory and sql drivers keep nothing in the cluster.
func HelmStorageFor(driver string) (HelmStorage, error) {
	switch driver {
	case "secret", "secrets", "":
		return HelmSecrets, nil
	case "configmap", "configmaps":
		return HelmConfigMaps, nil
	}
	return "", fmt.Errorf("HELM_DRIVER=%s: kubectl-ssa reads the releases Helm keeps in Secrets (HELM_DRIVER=secret, the default) or ConfigMaps (configmap) only", driver)
}

func (s HelmStorage) resource() schema.GroupVersionResource {
	if s == HelmConfigMaps {
		return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	}
	return schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
}

// HelmRelease is one revision of a release, read from the cluster.
type HelmRelease struct {
	*helm.Release
	// Object is the Secret or ConfigMap it was read from, as
	// Kind/namespace/name.
	Object string
	// Latest is the release's highest revision when it is not this one
	// (an upgrade that failed after the last deployed one): helm
	// upgrade's --server-side=auto follows its apply method.
	Latest *helm.Release
	// secrets is the Secret filter of the run that read it, which
	// HelmManifests adds the Secrets of its manifest to.
	secrets *redact.Set
}

// ReadHelmRelease reads revision of release name in namespace ns from
// Helm's storage, as helm does: revision 0 is the last deployed one (the
// highest revision labelled status=deployed), any other the object named
// sh.helm.release.v1.NAME.vREVISION. Anyone who may create Secrets can
// label one as a release, so the revisions are chosen from the storage
// objects' metadata alone and only the chosen one is read and decoded
// (bounded as helm.Decode bounds it); it must be what its name and labels
// say. Its errors are one line that says what to do.
func (c *Cluster) ReadHelmRelease(ctx context.Context, storage HelmStorage, ns, name string, revision int) (*HelmRelease, error) {
	if revision > 0 {
		return c.helmRevisionNamed(ctx, storage, ns, name, revision)
	}
	revs, err := c.helmRevisions(ctx, storage, ns, name)
	if err != nil {
		return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
	}
	// Helm takes the highest deployed revision: concurrent upgrades can
	// leave several deployed.
	deployed, latest := helmRevision{}, helmRevision{}
	for _, r := range revs {
		if r.status == string(helm.Deployed) && r.version > deployed.version {
			deployed = r
		}
		if r.version > latest.version {
			latest = r
		}
	}
	if deployed.version == 0 {
		return nil, c.noRelease(storage, ns, name, 0, revs)
	}
	found, err := c.getHelm(ctx, storage, ns, name, deployed)
	if err != nil {
		return nil, err
	}
	if latest.version > deployed.version {
		// Only its apply method is used: one that can't be read leaves
		// the deployed revision standing for it.
		if r, err := c.getHelm(ctx, storage, ns, name, latest); err == nil {
			found.Latest = r.Release
		}
	}
	return found, nil
}

// helmRevisionNamed reads the revision asked for by its name, as helm
// does.
func (c *Cluster) helmRevisionNamed(ctx context.Context, storage HelmStorage, ns, name string, revision int) (*HelmRelease, error) {
	obj, err := c.Dynamic.Resource(storage.resource()).Namespace(ns).Get(ctx, helm.ObjectName(name, revision), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		revs, err := c.helmRevisions(ctx, storage, ns, name)
		if err != nil {
			return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
		}
		return nil, c.noRelease(storage, ns, name, revision, revs)
	}
	if err != nil {
		return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
	}
	return decodeHelm(ctx, storage, obj, name, revision)
}

// helmRevision is a storage object of a release, as its metadata says.
type helmRevision struct {
	object  string // its name
	version int
	status  string
}

// helmPage is how many storage objects are listed a request: their
// metadata may carry up to 256 KiB of annotations each.
const helmPage = 100

// helmRevisions lists the revisions of release name from the labels of
// its storage objects, their metadata alone, a page at a time.
func (c *Cluster) helmRevisions(ctx context.Context, storage HelmStorage, ns, name string) ([]helmRevision, error) {
	sel := labels.Set{helm.LabelOwner: helm.Owner, helm.LabelName: name}
	opts := metav1.ListOptions{LabelSelector: sel.String(), Limit: helmPage}
	var out []helmRevision
	for {
		list, err := c.Metadata.Resource(storage.resource()).Namespace(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for _, it := range list.Items {
			v, err := strconv.Atoi(it.Labels[helm.LabelVersion])
			if err != nil || v <= 0 {
				continue // not a revision Helm wrote, nor one it reads
			}
			out = append(out, helmRevision{object: it.Name, version: v, status: it.Labels[helm.LabelStatus]})
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}

// getHelm reads and decodes the revision r of release name. Its name must
// be the one Helm gives that revision: Helm reads a revision by its name.
func (c *Cluster) getHelm(ctx context.Context, storage HelmStorage, ns, name string, r helmRevision) (*HelmRelease, error) {
	if want := helm.ObjectName(name, r.version); r.object != want {
		return nil, fmt.Errorf("%s/%s/%s is labelled as revision %d of helm release %q, but Helm names that revision %s: %s",
			storage, ns, r.object, r.version, name, want, helmNotHelms)
	}
	obj, err := c.Dynamic.Resource(storage.resource()).Namespace(ns).Get(ctx, r.object, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
	}
	return decodeHelm(ctx, storage, obj, name, r.version)
}

// latestHelmRevision is the release's highest revision of any status, when
// it is above deployed; nil when it is not, or can't be read.
func (c *Cluster) latestHelmRevision(ctx context.Context, storage HelmStorage, ns, name string, deployed int) *helm.Release {
	revs, err := c.helmRevisions(ctx, storage, ns, name)
	if err != nil {
		return nil
	}
	latest := helmRevision{version: deployed}
	for _, r := range revs {
		if r.version > latest.version {
			latest = r
		}
	}
	if latest.version == deployed {
		return nil
	}
	r, err := c.getHelm(ctx, storage, ns, name, latest)
	if err != nil {
		return nil
	}
	return r.Release
}

// decodeHelm decodes the release in a storage object, which must be
// revision of release name: the object's name and labels are Helm's,
// the data inside is whatever its writer put there.
func decodeHelm(ctx context.Context, storage HelmStorage, obj *unstructured.Unstructured, name string, revision int) (*HelmRelease, error) {
	where := ObjectName(obj)
	if err := checkHelmLabels(obj, name, revision); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", where, err, helmNotHelms)
	}
	data, _, _ := unstructured.NestedString(obj.Object, "data", helm.DataKey)
	if storage == HelmSecrets {
		// The Secret's own base64, under Helm's.
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot decode the helm release it holds: its data is not base64: %w", where, err)
		}
		data = string(b)
	}
	if data == "" {
		return nil, fmt.Errorf("%s: holds no helm release (no data.%s): is it Helm's?", where, helm.DataKey)
	}
	r, err := helm.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode the helm release it holds: %w", where, err)
	}
	if err := checkHelmData(r, obj.GetNamespace(), name, revision); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", where, err, helmNotHelms)
	}
	return &HelmRelease{Release: r, Object: where, secrets: redact.FromContext(ctx)}, nil
}

// checkHelmLabels: the labels Helm gives a revision's object agree with
// its name.
func checkHelmLabels(obj *unstructured.Unstructured, name string, revision int) error {
	l := obj.GetLabels()
	if v, ok := l[helm.LabelName]; ok && v != name {
		return fmt.Errorf("its label %s=%s names another release than its name", helm.LabelName, v)
	}
	if v, ok := l[helm.LabelVersion]; ok && v != strconv.Itoa(revision) {
		return fmt.Errorf("its label %s=%s is another revision than its name's %d", helm.LabelVersion, v, revision)
	}
	return nil
}

// checkHelmData: the release inside is the one the object's name says,
// in the object's namespace (Helm keeps a release where it installs it).
func checkHelmData(r *helm.Release, ns, name string, revision int) error {
	switch {
	case r.Name != name:
		return fmt.Errorf("the release inside is named %q, not %q as the object is", r.Name, name)
	case r.Version != revision:
		return fmt.Errorf("the release inside is revision %d, not %d as the object's name says", r.Version, revision)
	case r.Namespace != "" && r.Namespace != ns:
		return fmt.Errorf("the release inside is in namespace %q, not in the object's %q", r.Namespace, ns)
	}
	return nil
}

// noRelease explains why the release or its revision was not found, from
// the labels of the release's storage objects.
func (c *Cluster) noRelease(storage HelmStorage, ns, name string, revision int, revs []helmRevision) error {
	if len(revs) == 0 {
		sel := labels.Set{helm.LabelOwner: helm.Owner, helm.LabelName: name}
		words := append([]string{"kubectl", "get", strings.ToLower(string(storage)) + "s", "-A", "-l", helm.LabelOwner + "=" + helm.Owner}, c.CommandFlags...)
		driver := ""
		if storage == HelmSecrets {
			driver = " (and HELM_DRIVER=configmap for a release Helm stores in ConfigMaps)"
		}
		return &HelmReleaseNotFoundError{msg: fmt.Sprintf("helm release %q not found in namespace %q (no %s labelled %s): check the release name and -n%s; %s lists the releases", name, ns, storage, sel, driver, shell.Join(words))}
	}
	revs = append([]helmRevision(nil), revs...)
	sort.Slice(revs, func(i, j int) bool { return revs[i].version > revs[j].version })
	var have []string
	for i, r := range revs {
		if i == 5 {
			have = append(have, fmt.Sprintf("and %d more", len(revs)-i))
			break
		}
		have = append(have, fmt.Sprintf("%d %s", r.version, r.status))
	}
	if revision > 0 {
		return fmt.Errorf("helm release %q in namespace %q has no revision %d (its revisions: %s): give one of them with --helm-revision", name, ns, revision, strings.Join(have, ", "))
	}
	return &HelmNoDeployedError{msg: fmt.Sprintf("helm release %q in namespace %q has no deployed revision (its revisions: %s): give one with --helm-revision", name, ns, strings.Join(have, ", "))}
}

// HelmManifests are the objects of a release's manifest. Secrets among
// them are remembered by the Secret filter of the run that read the
// release, as ReadManifests remembers them. Their Source is empty: they come from no file. A
// manifest of more than helm.MaxObjects objects, or with an object twice
// (which Helm's install refuses: its second create finds the first), is
// refused, naming the storage object it came from.
func HelmManifests(r *HelmRelease) ([]Manifest, error) {
	name := fmt.Sprintf("helm release %s revision %d", r.Name, r.Version)
	if err := helm.CheckDocuments(r.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", r.Object, err, helmTooMany)
	}
	res := resource.NewLocalBuilder().Unstructured().Local().Stream(strings.NewReader(r.Manifest), name).Flatten().ContinueOnError().Do()
	out, err := manifestsOf(res, r.secrets)
	if errors.Is(err, ErrNoObjects) {
		return nil, fmt.Errorf("%s has an empty manifest (a chart of hooks only?): nothing to compare", name)
	}
	if err != nil {
		return nil, err
	}
	if len(out) > helm.MaxObjects {
		// a List's items are objects of their own
		return nil, fmt.Errorf("%s: its manifest has %d objects, more than the %d kubectl-ssa reads of a release: %s", r.Object, len(out), helm.MaxObjects, helmTooMany)
	}
	seen := make(map[string]bool, len(out))
	for i := range out {
		out[i].Source = ""
		key := helmIdentity(out[i].Object, r.Namespace)
		if seen[key] {
			return nil, fmt.Errorf("%s: its manifest has %s twice, which helm install refuses: %s", r.Object, key, helmNotHelms)
		}
		seen[key] = true
	}
	return out, nil
}

// What to do about a storage object Helm could not have written, and
// about one far larger than charts make.
const (
	helmNotHelms = "Helm did not write it; delete it, or give another revision with --helm-revision"
	helmTooMany  = "delete it if Helm did not write it, or give another revision with --helm-revision"
)

// helmIdentity is an object as HelmKey tells it apart, in the release's
// namespace ns when it names none (the cluster is not asked whether its
// kind is namespaced: a cluster-scoped object that names a namespace is
// an error anyway).
func helmIdentity(u *unstructured.Unstructured, ns string) string {
	gk := u.GroupVersionKind().GroupKind()
	if u.GetNamespace() != "" {
		ns = u.GetNamespace()
	}
	return gk.String() + "/" + ns + "/" + u.GetName()
}

// AsHelmApplies makes ms what Helm sends when it applies them as release
// r: an object without a namespace is in the release's namespace (ns when
// the release names none) if its kind is namespaced, and every object
// carries the label and annotations Helm adds.
func (c *Cluster) AsHelmApplies(ms []Manifest, r *HelmRelease, ns string) {
	if r.Namespace != "" {
		ns = r.Namespace
	}
	for _, m := range ms {
		helm.SetMetadata(m.Object, r.Name, ns)
		c.inNamespace(m.Object, ns)
	}
}

// inNamespace puts obj in ns when it names none and its kind is
// namespaced, as Helm's resource builder does.
func (c *Cluster) inNamespace(obj *unstructured.Unstructured, ns string) {
	if obj.GetNamespace() != "" {
		return
	}
	// A kind not served is left as it is: predicting it says so.
	if mp, err := c.Mapping(obj.GroupVersionKind()); err == nil && mp.Scope.Name() == meta.RESTScopeNameNamespace {
		obj.SetNamespace(ns)
	}
}

// HelmOriginals are release r's objects as its manifest renders them, by
// HelmKey: what Helm's client-side upgrade patches from (its resource
// builder puts them in the release's namespace; Helm's label and
// annotations are added to the new render only).
func (c *Cluster) HelmOriginals(r *HelmRelease, ns string) (map[string]*unstructured.Unstructured, error) {
	ms, err := HelmManifests(r)
	if err != nil {
		return nil, err
	}
	if r.Namespace != "" {
		ns = r.Namespace
	}
	out := make(map[string]*unstructured.Unstructured, len(ms))
	for _, m := range ms {
		c.inNamespace(m.Object, ns)
		out[HelmKey(m.Object)] = m.Object
	}
	return out, nil
}

// HelmReleaseNames lists the releases Helm keeps in namespace ns, from
// the labels of its storage objects (their metadata alone).
func (c *Cluster) HelmReleaseNames(ctx context.Context, storage HelmStorage, ns string) ([]string, error) {
	sel := labels.Set{helm.LabelOwner: helm.Owner}
	list, err := c.Metadata.Resource(storage.resource()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, it := range list.Items {
		if n := it.Labels[helm.LabelName]; n != "" {
			names[n] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// HelmPlan is what Helm does besides applying the render: it checks the
// objects the render adds to the release (pkg/action/upgrade.go: the
// resources to be created, which existingResourceConflict checks), and
// one that exists already fails the upgrade unless its label and
// annotations name the release (refusals; objects of the release's
// revision are not checked, as Helm does not); and it deletes the
// release's objects the render no longer has, but those annotated
// helm.sh/resource-policy: keep (deletes).
func (c *Cluster) HelmPlan(ctx context.Context, ms []Manifest, r *HelmRelease) (map[string]string, []string, error) {
	var prev []Manifest
	if r.Version > 0 {
		var err error
		if prev, err = HelmManifests(r); err != nil {
			return nil, nil, err
		}
	}
	c.AsHelmApplies(prev, r, c.Namespace)
	have, next := map[string]bool{}, map[string]bool{}
	for _, m := range prev {
		have[HelmKey(m.Object)] = true
	}
	for _, m := range ms {
		next[HelmKey(m.Object)] = true
	}
	var deletes []string
	for _, m := range prev {
		if next[HelmKey(m.Object)] {
			continue
		}
		live, _, err := c.Live(ctx, m.Object)
		if err != nil || live == nil || live.GetAnnotations()[helm.ResourcePolicyAnnotation] == "keep" {
			continue
		}
		deletes = append(deletes, ObjectName(m.Object))
	}
	verb := "update"
	if r.Version == 0 {
		verb = "install" // a release not installed yet
	}
	out := map[string]string{}
	for _, m := range ms {
		key := HelmKey(m.Object)
		if have[key] {
			continue
		}
		live, _, err := c.Live(ctx, m.Object)
		if err != nil || live == nil {
			// Not there (created), or not readable: the prediction says
			// which.
			continue
		}
		ns := m.Object.GetAnnotations()[helm.ReleaseNamespaceAnnotation]
		if msg := helm.CheckOwnership(live, r.Name, ns); msg != "" {
			out[key] = "unable to continue with " + verb + ": " + msg // Helm 4's words (helm 4.2.4)
		}
	}
	return out, deletes, nil
}

// HelmKey is an object as Helm tells its resources apart: group, kind,
// namespace and name.
func HelmKey(u *unstructured.Unstructured) string {
	gk := u.GroupVersionKind().GroupKind()
	return gk.String() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// HelmReleaseNotFoundError: Helm's storage holds no revision at all of
// the release (it was never installed, or was uninstalled).
type HelmReleaseNotFoundError struct{ msg string }

func (e *HelmReleaseNotFoundError) Error() string { return e.msg }

// HelmNoDeployedError: the release has revisions, none deployed.
type HelmNoDeployedError struct{ msg string }

func (e *HelmNoDeployedError) Error() string { return e.msg }

// LastHelmRelease is what helm upgrade builds on when no revision is
// deployed: the last revision, when it failed or was superseded
// (pkg/action/upgrade.go); nil when it is neither or can't be read.
func (c *Cluster) LastHelmRelease(ctx context.Context, storage HelmStorage, ns, name string) *HelmRelease {
	r := c.latestHelmRevision(ctx, storage, ns, name, 0)
	if r == nil || (r.Status() != "failed" && r.Status() != "superseded") {
		return nil
	}
	return &HelmRelease{Release: r, Object: string(storage) + "/" + ns + "/" + helm.ObjectName(name, r.Version), secrets: redact.FromContext(ctx)}
}
