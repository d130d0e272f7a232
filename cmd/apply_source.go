package cmd

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// prepared is what explain-conflict and diff read before their first
// object: the palette, the manifests, the cluster, the apply's options.
type prepared struct {
	pal       *render.Palette
	manifests []kube.Manifest
	src       *applySource
	opts      conflict.Options
}

// applySource is where explain-conflict and diff read each apply from:
// the cluster (its reads side by side, its dry runs, the input's order),
// or with --local the saved files.
type applySource struct {
	reader source.Reader
	// cluster is nil with --local.
	cluster *source.Cluster
}

// noteApplied tells a cluster source that manifest comes before the next
// objects of the input, and what its apply leaves (nil: it fails): a
// Namespace then exists for them, or fails for them too.
func (s *applySource) noteApplied(manifest, result *unstructured.Unstructured) {
	if s.cluster != nil {
		s.cluster.NoteApplied(manifest, result)
	}
}

func (o *applyInput) prepare(ctx context.Context) (*prepared, error) {
	pal, err := o.palette()
	if err != nil {
		return nil, err
	}
	manifests, src, err := o.inputAndSource(ctx)
	if err != nil {
		return nil, err
	}
	o.read = manifests
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
func (o *applyInput) inputAndSource(ctx context.Context) ([]kube.Manifest, *applySource, error) {
	if o.local || o.helm.release != "" || slices.Contains(o.files.Filenames, "-") || o.mayAskForCredentials() {
		manifests, err := o.manifests(ctx)
		if err != nil {
			return nil, nil, err
		}
		src, err := o.source(ctx)
		return manifests, src, err
	}
	var g errgroup.Group
	var src *applySource
	g.Go(func() (err error) {
		src, err = o.source(ctx)
		return err
	})
	manifests, err := o.manifests(ctx)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, nil, err
	}
	return manifests, src, nil
}

// mayAskForCredentials tells whether the context's credentials come from
// an auth provider or an exec plugin whose interactiveMode is not Never
// (client-go runs it on the first request); true when the configuration
// can't be read (the source reports that).
func (o *applyInput) mayAskForCredentials() bool {
	cfg, err := o.configFlags.ToRawKubeConfigLoader().ClientConfig()
	if err != nil {
		return true
	}
	return cfg.AuthProvider != nil || cfg.ExecProvider != nil && cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode
}

// source is the cluster, or with --local the saved files.
func (o *applyInput) source(ctx context.Context) (*applySource, error) {
	if o.snapshot.file != "" {
		// The run's cluster is the snapshot's (kubeCluster), as a live
		// run's is the live one: what the fixes say of -n reads it.
		if _, err := o.kubeCluster(); err != nil {
			return nil, err
		}
		return o.snapshot.source(o)
	}
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
		return &applySource{reader: src.Reader(), cluster: src}, nil
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
	return &applySource{reader: source.Reader{Source: src}}, nil
}
