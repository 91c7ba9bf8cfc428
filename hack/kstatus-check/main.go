// kstatus-check reads one Kubernetes object as JSON or YAML on stdin and prints what
// sigs.k8s.io/cli-utils' kstatus computes for it: "<Status> <message>". The e2e suite uses it to prove
// that every kstatus reader (kpt, Flux, Argo CD, cli-utils) sees a PackageSync the way we mean it.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Through JSON into Unstructured, as client-go decodes objects: integers stay int64. Unmarshalling
	// YAML into a plain map makes them float64, and kstatus then fails on metadata.generation.
	data, err := yaml.YAMLToJSON(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	res, err := status.Compute(obj)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", res.Status, res.Message)
}
