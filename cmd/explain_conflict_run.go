package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// prepared is what explain-conflict and diff read before their first
// object: the palette, the manifests, the cluster, the apply's options.
type prepared struct {
	pal       *render.Palette
	manifests []kube.Manifest
	src       conflict.Source
	opts      conflict.Options
}

func (o *explainOptions) prepare(ctx context.Context) (*prepared, error) {
	pal, err := o.palette()
	if err != nil {
		return nil, err
	}
	manifests, src, err := o.inputAndSource(ctx)
	if err != nil {
		return nil, err
	}
	opts := conflict.Options{FieldManager: o.fieldManager, Force: o.force, Subresource: o.subresource, KubectlUpgrade: o.upgrade, CSAUpgrade: o.csaUpgrade,
		InputAutoscalers: inputAutoscalers(manifests)}
	return &prepared{pal: pal, manifests: manifests, src: src, opts: opts}, nil
}

// inputAndSource reads the input and sets up the source. Against a
// cluster, the source is set up (its OpenAPI index read, see source)
// while the files are read: the round trips overlap the parsing. The
// input's error comes first, as when one followed the other. The order
// is kept when a cluster must not be reached for a bad input: with
// credentials that may ask the user (an exec plugin that may prompt, or
// open a browser, on the terminal the manifest is typed on; an auth
// provider), for a Helm release (read from the cluster), from standard
// input, and with --local (--live-file may be standard input too).
func (o *explainOptions) inputAndSource(ctx context.Context) ([]kube.Manifest, conflict.Source, error) {
	if o.local || o.helm.release != "" || slices.Contains(o.files.Filenames, "-") || o.mayAskForCredentials() {
		manifests, err := o.manifests(ctx)
		if err != nil {
			return nil, nil, err
		}
		src, err := o.source(ctx)
		return manifests, src, err
	}
	type sourceResult struct {
		src conflict.Source
		err error
	}
	done := make(chan sourceResult, 1)
	go func() {
		src, err := o.source(ctx)
		done <- sourceResult{src, err}
	}()
	manifests, err := o.manifests(ctx)
	if err != nil {
		return nil, nil, err
	}
	r := <-done
	return manifests, r.src, r.err
}

// mayAskForCredentials tells whether the context's credentials come from
// an auth provider or an exec plugin whose interactiveMode is not Never
// (client-go runs it on the first request); true when the configuration
// can't be read (the source reports that).
func (o *explainOptions) mayAskForCredentials() bool {
	cfg, err := o.configFlags.ToRawKubeConfigLoader().ClientConfig()
	if err != nil {
		return true
	}
	return cfg.AuthProvider != nil || cfg.ExecProvider != nil && cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode
}

func (o *explainOptions) run(ctx context.Context) error {
	p, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	pal, manifests, src, opts := p.pal, p.manifests, p.src, p.opts
	opts.Verify, opts.Result = o.verify, diff.Result
	// Every object that can be simulated is explained; the others are
	// errors at the end, as kubectl apply goes on after a bad object.
	var reports []*v1alpha1.ConflictReport
	var sources []string
	var failed []error
	for i, m := range manifests {
		r, err := o.explainOne(ctx, src, m, opts)
		if stop := stopped(ctx, "explain-conflict stopped at %s, object %d of %d: nothing is reported (it only reads: run it again)", kube.ObjectName(m.Object), i+1, len(manifests)); stop != nil {
			return stop
		}
		if err != nil || r.Message != "" {
			noteApplied(src, m.Object, nil)
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if r.Message == "" {
			noteApplied(src, m.Object, r.Result)
		}
		if !o.showSecrets {
			r.RedactSecrets()
		}
		r.Refused = o.helm.refusal(m)
		r.Resolutions = conflict.Resolutions(r, o.target(m.Source, &r.ConflictReport))
		reports = append(reports, &r.ConflictReport)
		sources = append(sources, m.Source)
	}

	if len(reports) > 0 && o.output.out.IsData() {
		items := make([]any, len(reports))
		for i, r := range reports {
			items[i] = r
		}
		if err := o.output.out.Print(o.streams.Out, items, len(manifests) > 1); err != nil {
			return err
		}
	} else if len(reports) > 0 {
		tm := o.time.mode
		ropts := render.Options{Time: tm, Now: time.Now(), Palette: pal}
		o.printHelmHeader(o.streams.Out)
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(o.streams.Out)
			}
			render.ConflictExplanation(o.streams.Out, r, ropts, o.target(sources[i], r))
		}
	}
	return exitCode(o.streams.ErrOut, reports, failed)
}

// inputAutoscalers are the HorizontalPodAutoscalers among the manifests.
func inputAutoscalers(ms []kube.Manifest) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, m := range ms {
		if gvk := m.Object.GroupVersionKind(); gvk.Group == "autoscaling" && gvk.Kind == "HorizontalPodAutoscaler" {
			out = append(out, *m.Object)
		}
	}
	return out
}

// target is what makes the suggested commands about r pasteable: the
// object, the connection and input flags, the field manager.
func (o *explainOptions) target(source string, r *v1alpha1.ConflictReport) remedy.Target {
	return remedy.Target{File: source, Kustomize: o.files.Kustomize, ClusterFlags: o.clusterFlags,
		ResourceArg: r.Object.ResourceArg(), Namespace: r.Object.Namespace, FieldManager: o.fieldManager, Subresource: o.subresource, Tool: o.tool,
		HelmRelease: o.helm.release, HelmRevision: o.helm.revision, HelmInstall: o.helm.read != nil && o.helm.read.Version == 0,
		HelmServerSide: map[bool]string{true: o.helm.serverSide}[o.helm.serverSide != helmSideAuto]}
}

// exitCode says how the run ends: errors first, then what --verify found,
// then conflicts.
func exitCode(errOut io.Writer, reports []*v1alpha1.ConflictReport, failed []error) error {
	if len(failed) > 0 {
		for _, e := range failed[:len(failed)-1] {
			render.Error(errOut, e)
		}
		return failed[len(failed)-1]
	}
	refused, notRun := 0, 0
	for _, r := range reports {
		switch {
		case r.Verify == nil:
		case r.Verify.Status == v1alpha1.VerifyDiffers && len(r.Unchecked) > 0:
			return &ExitError{Code: CodeVerifyDiffers, Err: errors.New("the server's dry run differs from the prediction (see the report): validation not modelled here (the report's unchecked) refused or changed the apply")}
		case r.Verify.Status == v1alpha1.VerifyDiffers:
			return &ExitError{Code: CodeVerifyDiffers, Err: errors.New("the local prediction differs from the server's dry run (see the report): please report this as a kubectl-ssa bug")}
		case r.Verify.Status == v1alpha1.VerifyRefused:
			refused++
		case r.Verify.Status == v1alpha1.VerifyNotRun:
			notRun++
		}
	}
	if refused > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("--verify: the server refused the dry run of %d of %d object(s) (it needs patch permission): the prediction stands unverified", refused, len(reports))}
	}
	if notRun > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("--verify: %d of %d object(s) can't be dry-run before what the input applies ahead of them exists (a Namespace, or what a Pod's admission reads: see each report's verify reason): their prediction stands unverified (apply those first, then verify again)", notRun, len(reports))}
	}
	for _, r := range reports {
		denied := r.Admission != nil && r.Admission.Denied != ""
		// The message is a conflict's, or the denial's.
		conflicts := r.Message != "" && (!denied || r.Message != r.Admission.Denied)
		if r.Verify != nil && r.Verify.Status == v1alpha1.VerifyResolved {
			// The server's answer stands for what was not known here.
			denied = r.Verify.ServerDenied != ""
		}
		if conflicts || denied || r.Refused != nil {
			return exit(CodeFound)
		}
	}
	if err := controlledResets(reports); err != nil {
		return err
	}
	return inexact(reports)
}

// controlledResets is exit 5 when a write resets a field a controller
// sets (ConflictReport.ControlledResets), named with the first of them.
func controlledResets(reports []*v1alpha1.ConflictReport) error {
	var names []string
	var first string
	for _, r := range reports {
		if len(r.ControlledResets) == 0 {
			continue
		}
		name := ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
		names = append(names, name)
		if first == "" {
			first = render.ControlledReset(name, r.ControlledResets[0], r.HelmUpgrade)
		}
	}
	if len(names) == 0 {
		return nil
	}
	more := ""
	if len(names) > 1 {
		more = fmt.Sprintf(" (and %d more object(s): %s)", len(names)-1, strings.Join(names[1:], ", "))
	}
	return &ExitError{Code: CodeControlledReset, Err: fmt.Errorf("%s%s: see the ways out in the report, and take one before you apply", first, more)}
}

// inexact is exit 4 when admission that is not evaluated here matches an
// apply that the server's dry run did not check (--verify).
func inexact(reports []*v1alpha1.ConflictReport) error {
	var names []string
	for _, r := range reports {
		unverified := r.Verify == nil || r.Verify.Status != v1alpha1.VerifyAgrees && r.Verify.Status != v1alpha1.VerifyResolved
		switch {
		case r.Admission != nil && !r.Admission.Exact && unverified:
			names = append(names, notExact(r.Object, r.Admission))
		case len(r.Unchecked) > 0 && unverified:
			names = append(names, ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)+" ("+r.Unchecked[0]+")")
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("the prediction of %s is not exact: admission or validation may change or refuse the apply; add --verify to have the server's dry run check it", strings.Join(names, ", "))}
}

// notExact names an object and the first reason its admission is not
// known here (a matching policy or webhook that may deny or change it, a
// built-in plugin, a list that could not be read).
func notExact(o v1alpha1.ObjectRef, a *v1alpha1.AdmissionReport) string {
	name := ownership.ObjectName(o.Kind, o.Namespace, o.Name)
	if len(a.Reasons) == 0 {
		return name
	}
	more := ""
	if len(a.Reasons) > 1 {
		more = fmt.Sprintf(", and %d more", len(a.Reasons)-1)
	}
	return fmt.Sprintf("%s (%s%s)", name, a.Reasons[0], more)
}

// source is the cluster, or with --local the saved files.
func (o *explainOptions) source(ctx context.Context) (conflict.Source, error) {
	if !o.local {
		c, err := o.kubeCluster()
		if err != nil {
			return nil, err
		}
		src := source.NewCluster(c, o.cacheDir())
		// The OpenAPI index, which every prediction reads first, is read
		// while discovery is checked (on a first run, two round trips).
		src.Loader.Prefetch()
		if err := c.CheckServer(); err != nil {
			return nil, err
		}
		return src, nil
	}
	lives, err := kube.ReadManifests(ctx, o.streams.In, &resource.FilenameOptions{Filenames: o.liveFiles})
	if err != nil {
		return nil, fmt.Errorf("--live-file: %w", err)
	}
	crds, err := readCRDs(ctx, o.schemaFiles)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, len(lives))
	for i, l := range lives {
		objs[i] = l.Object
	}
	src, err := conflict.NewOfflineSource(objs, crds)
	if err != nil {
		return nil, fmt.Errorf("--schema: %w", err)
	}
	return src, nil
}

// appliedNoter is a source that reads the input in order
// (source.Cluster).
type appliedNoter interface {
	NoteApplied(manifest, result *unstructured.Unstructured)
}

// noteApplied tells a cluster source that manifest comes before the next
// objects of the input, and what its apply leaves (nil: it fails): a
// Namespace then exists for them, or fails for them too.
func noteApplied(src conflict.Source, manifest, result *unstructured.Unstructured) {
	if s, ok := src.(appliedNoter); ok {
		s.NoteApplied(manifest, result)
	}
}
