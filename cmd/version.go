package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// Set with -ldflags "-X github.com/kubectl-ssa/kubectl-ssa/cmd.version=..."
var (
	version   = "dev"
	gitCommit = ""
)

// VersionInfo is the output of "kubectl ssa version -o json".
type VersionInfo struct {
	Kind      string            `json:"kind"`
	Version   string            `json:"version"`
	GitCommit string            `json:"gitCommit"`
	GoVersion string            `json:"goVersion"`
	Platform  string            `json:"platform"`
	Libraries map[string]string `json:"libraries"`
}

func versionInfo() VersionInfo {
	v := VersionInfo{
		Kind:      "Version",
		Version:   version,
		GitCommit: gitCommit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Libraries: map[string]string{},
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, d := range bi.Deps {
			switch d.Path {
			case "k8s.io/client-go", "k8s.io/apimachinery", "k8s.io/cli-runtime", "sigs.k8s.io/structured-merge-diff/v6":
				v.Libraries[d.Path] = d.Version
			}
		}
	}
	return v
}

func newVersionCmd(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl ssa",
		Example: `  # Print the version
  kubectl ssa version

  # Print the version and library versions as JSON
  kubectl ssa version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo()
			switch output {
			case "":
				fmt.Fprintf(g.streams.Out, "kubectl-ssa %s (%s, %s)\n", v.Version, v.GoVersion, v.Platform)
				return nil
			case "json", "yaml":
				return render.Data(g.streams.Out, output, []interface{}{v}, false)
			}
			return &ExitError{Code: 2, Err: fmt.Errorf("--output must be json, yaml or empty, not %q", output)}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json, yaml, or empty for one line.")
	return cmd
}
