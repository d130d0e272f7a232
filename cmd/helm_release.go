package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// helmFieldManager is the field manager of the helm binary: Helm 4 sets
// kube.ManagedFieldsManager to "helm" (cmd/helm/helm.go), for its
// client-side writes and its server-side applies alike. Programs built
// on the Helm SDK write as their binary's name unless they set it.
const helmFieldManager = "helm"

// helmInput is the input of explain-conflict and diff that is a Helm
// release read from the cluster, and the flags whose defaults follow
// from it.
type helmInput struct {
	release  string
	revision int
	// changed tells whether the user gave a flag (its default then
	// stands).
	changed func(name string) bool
	// read is the revision read, once the input is.
	read *kube.HelmRelease
	// refusals are Helm's ownership check's errors, by object (helmKey),
	// of the objects the next render adds to the release.
	refusals map[string]string
	// deletes are the objects of the release the next render no longer
	// has, which the upgrade deletes (Kind/namespace/name).
	deletes []string
	// serverSide is --helm-server-side, as helm upgrade's --server-side:
	// auto (follow the last revision), true or false.
	serverSide string
	// mode is how the upgrade predicted writes, once the release is read;
	// originals, for a client-side upgrade, the revision's objects by
	// kube.HelmKey, which Helm patches from.
	mode      v1alpha1.HelmUpgradeMode
	originals map[string]*unstructured.Unstructured
}

// The values of --helm-server-side, as helm upgrade's --server-side.
const (
	helmSideAuto  = "auto"
	helmSideTrue  = "true"
	helmSideFalse = "false"
)

func (h *helmInput) addFlags(cmd *cobra.Command, o *applyInput) {
	f := cmd.Flags()
	f.StringVar(&h.release, "helm-release", "", "The Helm release the manifests belong to, in the namespace of -n, read from Helm's storage (Secrets, or ConfigMaps with HELM_DRIVER=configmap) without the helm binary. Alone, the manifests are its last deployed revision's; with -f/-k, they are its next render (helm template's output), or its first: a release not installed yet is predicted as helm install applies it. Either way they are predicted as Helm applies them: as field manager helm, with the label and annotations Helm adds, objects without a namespace in the release's.")
	_ = cmd.RegisterFlagCompletionFunc("helm-release", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		return withPrefix(helmReleaseNames(ctx, o), toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	f.StringVar(&h.serverSide, "helm-server-side", helmSideAuto, "With --helm-release: how helm upgrade writes, as its --server-side: auto (its default) follows the release's last revision, server-side apply for a release recorded so, Helm's client-side patch for one recorded as client-side apply (Helm 3, or --server-side=false), which deletes every field the last revision rendered and the render drops, whoever owns it now; true applies server-side (moving helm's client-side ownership to its apply first), false patches client-side.")
	f.IntVar(&h.revision, "helm-revision", 0, "With --helm-release and no -f/-k: read this revision instead of the last deployed one.")
	f.StringSliceVar(&o.csaUpgrade, "csa-upgrade", nil, "Before the apply, move the ownership these managers hold through Update (client-side writes) to --field-manager's apply, as client-go's csaupgrade does: Helm 4 does so with helm when it upgrades a release recorded as client-side apply with --server-side=true (the default with --helm-release for such a release).")
}

// bind remembers which flags the user gave; the defaults that follow from
// --helm-release are set here.
func (h *helmInput) bind(cmd *cobra.Command, o *applyInput) {
	h.changed = cmd.Flags().Changed
	if h.release == "" {
		return
	}
	if !h.changed("field-manager") {
		o.fieldManager = helmFieldManager
	}
	if !h.changed("kubectl-upgrade") {
		// Helm does not do kubectl's steps.
		o.upgrade = false
	}
}

// validate checks the Helm flags and those that depend on them; verify:
// explain-conflict's --verify is given.
func (h *helmInput) validate(o *applyInput, verify bool) error {
	for _, m := range o.csaUpgrade {
		if err := ownership.ValidateManager(m); err != nil {
			return fmt.Errorf("--csa-upgrade: %w", err)
		}
	}
	switch {
	case len(o.csaUpgrade) > 0 && verify:
		return errors.New("--verify can't check a prediction with --csa-upgrade: the server's dry run does not see the ownership moved first, which is a patch of its own")
	case len(o.csaUpgrade) > 0 && o.subresource != "":
		return errors.New("--csa-upgrade moves ownership of the main resource: it does not go with --subresource")
	case h.revision != 0 && h.release == "":
		return errors.New("--helm-revision goes with --helm-release")
	case h.serverSide != helmSideAuto && h.serverSide != helmSideTrue && h.serverSide != helmSideFalse:
		return fmt.Errorf("--helm-server-side must be auto, true or false (as helm upgrade's --server-side), not %q", h.serverSide)
	case h.serverSide != helmSideAuto && h.release == "":
		return errors.New("--helm-server-side goes with --helm-release")
	case h.release == "":
		return nil
	case h.revision < 0, h.revision == 0 && h.changed != nil && h.changed("helm-revision"):
		return fmt.Errorf("--helm-revision must be a revision number, 1 or above, not %d (without it: the last deployed revision)", h.revision)
	case h.revision != 0 && (len(o.files.Filenames) > 0 || o.files.Kustomize != ""):
		return errors.New("--helm-revision picks the manifests of a revision: with -f/-k the manifests are yours, give one or the other")
	case o.local:
		return errors.New("--helm-release reads the release from the cluster, --local never contacts one: give one of them")
	case o.subresource != "":
		return errors.New("--subresource predicts an apply to one object's subresource: it does not go with --helm-release")
	}
	// Helm's own rule (chartutil.ValidateReleaseName): a DNS-1123
	// subdomain of at most 53 characters.
	errs := validation.IsDNS1123Subdomain(h.release)
	if len(h.release) > 53 {
		errs = append(errs, "must be no more than 53 characters")
	}
	if len(errs) > 0 {
		return fmt.Errorf("--helm-release %q is not a Helm release name: %s", h.release, strings.Join(errs, "; "))
	}
	return nil
}

// manifests reads the input: -f/-k, the Helm release's revision, or -f/-k
// as the Helm release's next revision.
func (o *applyInput) manifests(ctx context.Context) ([]kube.Manifest, error) {
	h := &o.helm
	files := len(o.files.Filenames) > 0 || o.files.Kustomize != ""
	var ms []kube.Manifest
	if files {
		var err error
		if ms, err = kube.ReadManifests(ctx, o.streams.In, &o.files); err != nil || h.release == "" {
			return ms, err
		}
	}
	storage, err := kube.HelmStorageFor(os.Getenv("HELM_DRIVER"))
	if err != nil {
		return nil, err
	}
	c, err := o.kubeCluster()
	if err != nil {
		return nil, err
	}
	if err := c.CheckServer(); err != nil {
		return nil, err
	}
	// A chart may put objects in other namespaces than the release's:
	// Helm applies them there, -n or not.
	c.Enforce = false
	h.read, err = c.ReadHelmRelease(ctx, storage, c.Namespace, h.release, h.revision)
	var notFound *kube.HelmReleaseNotFoundError
	var noDeployed *kube.HelmNoDeployedError
	if files && errors.As(err, &noDeployed) {
		// helm upgrade then builds on the last revision, failed or
		// superseded.
		if last := c.LastHelmRelease(ctx, storage, c.Namespace, h.release); last != nil {
			h.read, err = last, nil
		}
	}
	if files && errors.As(err, &notFound) {
		// The next render of a release not installed yet: helm install's
		// preflight. Helm 4 installs server-side by default.
		h.read, err = &kube.HelmRelease{Release: &helm.Release{Name: h.release, Namespace: c.Namespace, ApplyMethod: helm.ServerSideApply}}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.chooseMode(c, o); err != nil {
		return nil, err
	}
	if !files {
		if ms, err = kube.HelmManifests(h.read); err != nil {
			return nil, err
		}
	}
	c.AsHelmApplies(ms, h.read, c.Namespace)
	if files {
		if h.refusals, h.deletes, err = c.HelmPlan(ctx, ms, h.read); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// chooseMode decides how the upgrade writes, as helm upgrade does
// (getUpgradeServerSideValue): auto follows the apply method of the
// release's last revision, whatever its status; an install is
// server-side unless told otherwise. A server-side upgrade of a revision
// applied client-side first moves helm's client-side ownership to its
// apply (csaupgrade), which --verify's dry run can't see.
func (h *helmInput) chooseMode(c *kube.Cluster, o *applyInput) error {
	last := h.read.Release
	if h.read.Latest != nil {
		last = h.read.Latest
	}
	serverSide := last.ServerSide() || h.read.Version == 0
	if h.serverSide != helmSideAuto {
		serverSide = h.serverSide == helmSideTrue
	}
	h.mode = v1alpha1.HelmServerSide
	if !serverSide {
		h.mode = v1alpha1.HelmClientSide
		if h.read.Version == 0 {
			return nil // a create either way, by Update
		}
		var err error
		h.originals, err = c.HelmOriginals(h.read, c.Namespace)
		return err
	}
	if !h.read.ServerSide() && h.read.Version > 0 && !h.changed("csa-upgrade") {
		o.csaUpgrade = []string{o.fieldManager}
		// (Said when --verify is given.)
		o.unverifiable = "the revision was applied client-side, so Helm 4 moves helm's client-side ownership to its apply before it applies server-side, a write of its own that the server's dry run of the apply can't include"
	}
	return nil
}

// clientSide is the client-side write of m's object, for a client-side
// upgrade (nil otherwise).
func (h *helmInput) clientSide(m kube.Manifest) *conflict.ClientSide {
	if h.mode != v1alpha1.HelmClientSide {
		return nil
	}
	return &conflict.ClientSide{Original: h.originals[kube.HelmKey(m.Object)]}
}

// helmRefusal is the refusal of the object of m, if Helm refuses it.
func (h *helmInput) refusal(m kube.Manifest) *v1alpha1.Refusal {
	msg, ok := h.refusals[kube.HelmKey(m.Object)]
	if !ok {
		return nil
	}
	ns := m.Object.GetAnnotations()[helm.ReleaseNamespaceAnnotation]
	return &v1alpha1.Refusal{Tool: remedy.Helm, Release: h.read.Name, Namespace: ns, Message: msg,
		Labels:      map[string]string{helm.ManagedByLabel: helm.ManagedBy},
		Annotations: map[string]string{helm.ReleaseNameAnnotation: h.read.Name, helm.ReleaseNamespaceAnnotation: ns}}
}

// kubeCluster is the run's cluster clients, made once: with --snapshot,
// the snapshot's (a Helm release is read from it).
func (o *applyInput) kubeCluster() (*kube.Cluster, error) {
	if o.kc != nil {
		return o.kc, nil
	}
	if o.snapshot.file != "" {
		src, err := o.snapshot.source(o)
		if err != nil {
			return nil, err
		}
		o.kc = src.cluster.Cluster
		return o.kc, nil
	}
	c, err := o.cluster()
	if err != nil {
		return nil, err
	}
	o.kc = c
	return c, nil
}

// predict reads, predicts and (with verify) verifies the apply (or
// Helm's write) of one manifest; for a Helm upgrade it says which way
// helm upgrade writes and, for a release recorded as client-side apply
// (which can be upgraded either way), what the other way would do
// differently, predicted from the same read.
func (o *applyInput) predict(ctx context.Context, src *applySource, m kube.Manifest, opts conflict.Options, verify bool) (*conflict.Simulation, error) {
	h := &o.helm
	opts.ClientSide = h.clientSide(m)
	opts.Unverifiable = o.unverifiable
	read := func(ctx context.Context) (*conflict.State, error) { return src.reader.Read(ctx, m.Object, opts) }
	st, err := read(ctx)
	if err != nil {
		return nil, err
	}
	r, err := conflict.Predict(st, opts)
	if err == nil {
		r.Snapshot = o.snapshot.use()
	}
	if err == nil && verify {
		r, err = conflict.Verify(ctx, src.cluster.Server(), read, st, r, opts)
	}
	if err != nil || h.read == nil || h.mode == "" {
		return r, err
	}
	r.HelmUpgrade = &v1alpha1.HelmUpgrade{Mode: h.mode, Flag: h.serverSide}
	if h.read.Version == 0 || h.read.ServerSide() {
		return r, nil
	}
	other, way, err := o.otherWayOptions(m, opts)
	if err != nil {
		return nil, err
	}
	alt, err := conflict.Predict(st, other)
	if err != nil {
		return nil, err
	}
	r.HelmUpgrade.Other = otherWay(r, alt, way)
	return r, nil
}

// otherWayOptions are the options of the other way helm upgrade can
// write a release recorded as client-side apply than the one predicted.
func (o *applyInput) otherWayOptions(m kube.Manifest, opts conflict.Options) (conflict.Options, v1alpha1.HelmOtherWay, error) {
	h := &o.helm
	other := opts
	other.Result, other.Unverifiable = nil, ""
	if h.mode != v1alpha1.HelmServerSide {
		other.ClientSide, other.CSAUpgrade = nil, []string{opts.FieldManager}
		return other, v1alpha1.HelmOtherWay{Mode: v1alpha1.HelmServerSide, Flag: helmSideTrue}, nil
	}
	if h.originals == nil {
		c, err := o.kubeCluster()
		if err != nil {
			return other, v1alpha1.HelmOtherWay{}, err
		}
		if h.originals, err = c.HelmOriginals(h.read, c.Namespace); err != nil {
			return other, v1alpha1.HelmOtherWay{}, err
		}
	}
	other.ClientSide, other.CSAUpgrade = &conflict.ClientSide{Original: h.originals[kube.HelmKey(m.Object)]}, nil
	return other, v1alpha1.HelmOtherWay{Mode: v1alpha1.HelmClientSide, Flag: helmSideFalse}, nil
}

// otherWay is what alt, the other way of writing, does differently from
// r, compared on the objects the server would store (nil when nothing,
// or when a side can't be computed).
func otherWay(r, alt *conflict.Simulation, way v1alpha1.HelmOtherWay) *v1alpha1.HelmOtherWay {
	way.Conflicts = alt.Message != "" && len(alt.Conflicts) > 0
	way.ControlledResets = len(alt.ControlledResets) > 0
	mine, err := storedChanges(r)
	if err != nil {
		return nil
	}
	if !way.Conflicts && (r.Message == "" || len(r.Conflicts) == 0) {
		theirs, err := storedChanges(alt)
		if err != nil {
			return nil
		}
		for k, p := range mine {
			if _, ok := theirs[k]; !ok {
				way.Keeps = append(way.Keeps, p)
			}
		}
		for k, p := range theirs {
			if _, ok := mine[k]; !ok {
				way.Changes = append(way.Changes, p)
			}
		}
	}
	byPath := func(l []pathlang.Path) {
		sort.Slice(l, func(i, j int) bool { return l[i].APIServerString() < l[j].APIServerString() })
	}
	byPath(way.Keeps)
	byPath(way.Changes)
	if len(way.Keeps) == 0 && len(way.Changes) == 0 && way.Conflicts == (len(r.Conflicts) > 0) && way.ControlledResets == (len(r.ControlledResets) > 0) {
		return nil
	}
	return &way
}

// storedChanges are the fields whose stored value the write changes
// (added, removed or set; a list as a whole), by their path's text.
func storedChanges(s *conflict.Simulation) (map[string]pathlang.Path, error) {
	out := map[string]pathlang.Path{}
	if s.Live == nil || s.Action == v1alpha1.ActionCreate {
		return out, nil
	}
	res, _, err := diff.Result(s)
	if err != nil {
		return nil, err
	}
	changedValues(s.Live.Object, res.Object, fieldpath.Path{}, out)
	return out, nil
}

// changedValues walks two objects' maps and records where they differ;
// the server's bookkeeping and status aside.
func changedValues(a, b map[string]any, at fieldpath.Path, out map[string]pathlang.Path) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		if len(at) == 0 && k == "status" || len(at) == 1 && *at[0].FieldName == "metadata" && serverKept[k] {
			continue
		}
		p := append(at.Copy(), fieldpath.PathElement{FieldName: &k})
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		if aok && bok {
			changedValues(am, bm, p, out)
			continue
		}
		if !reflect.DeepEqual(normalJSON(a[k]), normalJSON(b[k])) {
			out[pathlang.Path(p).APIServerString()] = pathlang.Path(p)
		}
	}
}

// serverKept are metadata the server writes itself.
var serverKept = map[string]bool{"managedFields": true, "resourceVersion": true, "generation": true, "uid": true, "creationTimestamp": true}

// normalJSON is v as JSON reads it back (numbers of any Go type alike).
func normalJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
