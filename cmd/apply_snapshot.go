package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// snapshotInput is --snapshot: explain-conflict and diff read the
// cluster as a snapshot saw it, with no cluster reached.
type snapshotInput struct {
	file   string
	maxAge time.Duration
	// snap is the snapshot read (source); now the run's time.
	snap *source.Snapshot
	now  time.Time
}

func (s *snapshotInput) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.file, "snapshot", "", "Predict from a snapshot (kubectl ssa snapshot -o FILE) instead of the cluster: no cluster is contacted.")
	cmd.Flags().DurationVar(&s.maxAge, "max-age", 0, "With --snapshot: refuse a snapshot older than this (exit 6), e.g. 24h.")
}

// validate checks --snapshot against the other flags of the apply.
func (s *snapshotInput) validate(o *applyInput) error {
	switch {
	case s.file == "" && s.maxAge != 0:
		return errors.New("--max-age goes with --snapshot")
	case s.file == "":
		return nil
	case o.local:
		return errors.New("--snapshot and --local are two offline sources: give one of them")
	case s.maxAge < 0:
		return fmt.Errorf("--max-age must be positive, not %s", s.maxAge)
	}
	return nil
}

// source reads the snapshot, once, and refuses one older than --max-age.
func (s *snapshotInput) source(o *applyInput) (*applySource, error) {
	if s.snap != nil {
		return &applySource{reader: s.snap.Reader(), cluster: s.snap.Cluster}, nil
	}
	f, err := source.ReadSnapshot(s.file)
	if err != nil {
		return nil, err
	}
	s.now = time.Now()
	age := s.now.Sub(f.TakenAt.Time)
	switch {
	case s.maxAge > 0 && age > s.maxAge:
		return nil, &ExitError{Code: CodeSnapshotTooOld, Err: fmt.Errorf("--snapshot %s was taken %s ago (at %s), more than --max-age %s: take a new one with kubectl ssa snapshot",
			s.file, age.Round(time.Second), f.TakenAt.UTC().Format(time.RFC3339), s.maxAge)}
	case s.maxAge > 0 && age < -time.Minute:
		return nil, &ExitError{Code: CodeSnapshotTooOld, Err: fmt.Errorf("--snapshot %s was taken at %s, %s in the future: its age can't be checked against --max-age (the clocks disagree): take a new one with kubectl ssa snapshot",
			s.file, f.TakenAt.UTC().Format(time.RFC3339), (-age).Round(time.Second))}
	}
	ns, enforce, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	switch {
	case err == nil:
	case o.configFlags.Namespace != nil && *o.configFlags.Namespace != "":
		// No cluster is read: -n is all the kubeconfig would give.
		ns, enforce = *o.configFlags.Namespace, true
	default:
		return nil, fmt.Errorf("--snapshot contacts no cluster, but the namespace comes from the kubeconfig, which can't be read (%w): give -n NAMESPACE, or a kubeconfig that can be read", err)
	}
	if s.snap, err = source.NewSnapshot(f, ns, enforce); err != nil {
		return nil, fmt.Errorf("--snapshot %s: %w", s.file, err)
	}
	return &applySource{reader: s.snap.Reader(), cluster: s.snap.Cluster}, nil
}

// use is what a report says of the snapshot it was predicted from (nil
// without --snapshot).
func (s *snapshotInput) use() *v1alpha1.SnapshotUse {
	if s.snap == nil {
		return nil
	}
	f := s.snap.File
	return &v1alpha1.SnapshotUse{TakenAt: f.TakenAt, AgeSeconds: int64(s.now.Sub(f.TakenAt.Time).Seconds()), ServerVersion: f.ServerVersion.GitVersion}
}

// sentence says, for the review formats, what snapshot the prediction
// read and when it was taken (not its age: the same run, the same bytes);
// "" without --snapshot.
func (s *snapshotInput) sentence() string {
	u := s.use()
	if u == nil {
		return ""
	}
	return fmt.Sprintf("Predicted from snapshot %s, taken %s from %s: the cluster may have changed since", s.file, u.TakenAt.UTC().Format(time.RFC3339), u.ServerVersion)
}

// printHeader is the text views' line on the snapshot: when it was
// taken, how long ago, from which server.
func (s *snapshotInput) printHeader(w io.Writer) {
	u := s.use()
	if u == nil {
		return
	}
	age := time.Duration(u.AgeSeconds) * time.Second
	when := age.String() + " ago"
	if age < 0 {
		when = (-age).String() + " in the future: the clocks disagree"
	}
	fmt.Fprintf(w, "# predicted from snapshot %s, taken %s (%s) from %s: the cluster may have changed since\n\n",
		render.Escape(s.file), u.TakenAt.UTC().Format(time.RFC3339), when, render.Escape(u.ServerVersion))
}

// checkChanged is --verify with --snapshot: it reads each object's
// resourceVersion from the cluster and marks, in each report, whether the
// object changed since the snapshot.
func (s *snapshotInput) checkChanged(ctx context.Context, o *applyInput, reports []*v1alpha1.ConflictReport) error {
	c, err := o.cluster()
	if err != nil {
		return err
	}
	for _, r := range reports {
		if r.Snapshot == nil {
			continue
		}
		ref := r.Object
		obj := refObject(ref)
		live, _, err := c.Live(ctx, obj)
		if err != nil {
			return fmt.Errorf("--verify: %w", err)
		}
		was := ""
		if r.Action == v1alpha1.ActionApply {
			was = ref.ResourceVersion
		}
		now := ""
		if live != nil {
			now = live.GetResourceVersion()
		}
		changed := was != now
		r.Snapshot.ChangedSince = &changed
	}
	return nil
}

// snapshotChanged is the exit of --verify with --snapshot: 3 when an
// object changed since the snapshot, named.
func snapshotChanged(reports []*v1alpha1.ConflictReport) error {
	var names []string
	for _, r := range reports {
		if r.Snapshot != nil && r.Snapshot.ChangedSince != nil && *r.Snapshot.ChangedSince {
			names = append(names, kube.ObjectName(refObject(r.Object)))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &ExitError{Code: CodeVerifyDiffers, Err: fmt.Errorf("--verify: %d object(s) changed since the snapshot (their resourceVersion differs): %s: take a new snapshot and predict again",
		len(names), strings.Join(names, ", "))}
}

// refObject is the object ref names, as a manifest naming it.
func refObject(ref v1alpha1.ObjectRef) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	return u
}
