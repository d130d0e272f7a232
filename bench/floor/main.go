// Command floor is what a server-side prediction of an apply costs at
// the least: one client-go dry-run PATCH (application/apply-patch+yaml)
// of a manifest, printing the conflicts the server names. bench/ builds
// it once and reports every explain-conflict and diff time as a ratio to
// it.
//
//	floor MANIFEST RESOURCE FIELD_MANAGER
//
// RESOURCE is the plural resource of the manifest's kind (deployments,
// configmaps): the floor does no discovery. The kubeconfig is $KUBECONFIG.
// It exits 1 when the apply conflicts, as explain-conflict does.
package main

import (
	"context"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: floor MANIFEST RESOURCE FIELD_MANAGER")
		os.Exit(2)
	}
	code, err := run(os.Args[1], os.Args[2], os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	os.Exit(code)
}

func run(file, resource, manager string) (int, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 2, err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
		return 2, err
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return 2, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 2, err
	}
	r := client.Resource(obj.GroupVersionKind().GroupVersion().WithResource(resource)).Namespace(obj.GetNamespace())
	force := false
	_, err = r.Patch(context.Background(), obj.GetName(), types.ApplyYAMLPatchType, raw, metav1.PatchOptions{
		FieldManager: manager, Force: &force, DryRun: []string{metav1.DryRunAll},
	})
	if apierrors.IsConflict(err) {
		if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
			for _, c := range status.Status().Details.Causes {
				fmt.Printf("conflict: %s: %s\n", c.Field, c.Message)
			}
		}
		return 1, nil
	}
	if err != nil {
		return 2, err
	}
	fmt.Println("no conflict")
	return 0, nil
}
