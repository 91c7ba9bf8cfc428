// render-worker: kustomize's krusty in-process, for PackageSync's render pool (issue 27, item 2).
//
// A long-lived process speaking length-prefixed JSON frames over stdio (4-byte big-endian length, then one
// JSON object). One request at a time: kustomize's maps are not safe for concurrent builds (Flux runs
// krusty behind a mutex); the controller keeps a pool of workers for parallelism. A panic in a build is
// recovered and answered as that build's error; the worker goes on.
//
// Request:  {"id": 1, "op": "kustomize", "dir": "/abs/path/of/the/package/in/the/view"}
// Response: {"id": 1, "ok": true, "yaml": "..."} or {"id": 1, "ok": false, "error": "..."}
//
// The build is `kustomize build --load-restrictor LoadRestrictionsNone <dir>` of kustomize v5.8.2 (the same
// api module and options as its build command: legacy reordering unspecified, plugins and Helm off), so its
// output equals the binary's by construction.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// maxFrame bounds a request frame; responses are bounded by the controller's output limit instead.
const maxFrame = 1 << 20

type request struct {
	ID  uint64 `json:"id"`
	Op  string `json:"op"`
	Dir string `json:"dir"`
}

type response struct {
	ID    uint64 `json:"id"`
	OK    bool   `json:"ok"`
	YAML  string `json:"yaml,omitempty"`
	Error string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		req, err := readFrame(in)
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
			os.Exit(2)
		}
		if err := writeFrame(out, serve(req)); err != nil {
			fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
			os.Exit(2)
		}
	}
}

func serve(req request) (res response) {
	res.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			res = response{ID: req.ID, Error: fmt.Sprintf("kustomize panicked: %v", r)}
			debug.FreeOSMemory()
		}
	}()
	switch req.Op {
	case "kustomize":
		yaml, err := kustomizeBuild(req.Dir)
		if err != nil {
			return response{ID: req.ID, Error: err.Error()}
		}
		return response{ID: req.ID, OK: true, YAML: string(yaml)}
	default:
		return response{ID: req.ID, Error: fmt.Sprintf("unknown op %q", req.Op)}
	}
}

// kustomizeBuild is what kustomize v5.8.2's build command runs with --load-restrictor LoadRestrictionsNone
// and no other flag (commands/build/build.go: HonorKustomizeFlags over MakeDefaultOptions).
func kustomizeBuild(dir string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig.HelmConfig.Enabled = false
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

func readFrame(r io.Reader) (request, error) {
	var req request
	var size uint32
	if err := binary.Read(r, binary.BigEndian, &size); err != nil {
		return req, err
	}
	if size > maxFrame {
		return req, fmt.Errorf("request frame of %d bytes (most %d)", size, maxFrame)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return req, err
	}
	if err := json.Unmarshal(buf, &req); err != nil {
		return req, fmt.Errorf("request frame: %w", err)
	}
	return req, nil
}

func writeFrame(w *bufio.Writer, res response) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := binary.Write(w, binary.BigEndian, uint32(len(body))); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Flush()
}
