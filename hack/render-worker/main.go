// render-worker: kustomize and Helm as libraries, for PackageSync's render pool (issue 27, docs/adr/0038).
//
// A long-lived process speaking length-prefixed JSON frames over stdio (4-byte big-endian length, then one
// JSON object), one request at a time: kustomize's maps are not safe for concurrent builds (Flux runs krusty
// behind a mutex); the controller keeps a pool of workers for parallelism. It runs under hack/render-sandbox
// (Landlock: reads only the checkout directory, no TCP; RLIMIT_AS and GOMEMLIMIT), so a library bug that
// reads around the checks or allocates without bound stays contained; the controller kills it at the render
// timeout and replaces it.
//
//	Request:  {"id":1,"op":"kustomize","maxOutputBytes":N,"kustomize":{"root":"/checkout","dir":"/checkout/app","replace":{"/checkout/app/kustomization.yaml":"<base64>"}}}
//	          {"id":2,"op":"helm","maxOutputBytes":N,"helm":{"root":…,"chart":…,"releaseName":…,"namespace":…,"values":[…]}}
//	          {"id":3,"op":"version"}
//	          with "objects":true, the output may come as "objects" instead (objects.go)
//	Response: {"id":1,"ok":true,"yaml":"..."} or {"id":1,"ok":true,"objects":"[{...},...]"} or {"id":1,"ok":false,"kind":"failed"|"too-large"|"panic","error":"..."}
//	Mid-render, with "lookup":true in a helm request: {"id":2,"lookup":{"apiVersion":…,"kind":…,"namespace":…,"name":…}}
//	          answered by {"id":2,"op":"lookup-answer","answer":{"object":{…}} | {"code":403,"reason":…,"message":…}}
//
// A panic in a library is answered as that render's error (kind "panic"), then the worker exits: the
// library's state may be half-written, and the controller starts a fresh worker and retries once.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/kustomize/api/resmap"
)

// maxFrame bounds a request frame (decrypted sources and values travel in it).
const maxFrame = 64 << 20

type request struct {
	ID             uint64 `json:"id"`
	Op             string `json:"op"`
	MaxOutputBytes int    `json:"maxOutputBytes,omitempty"`
	// the output as a JSON array of objects where it can be (objects.go)
	Objects   bool              `json:"objects,omitempty"`
	Kustomize *kustomizeRequest `json:"kustomize,omitempty"`
	Helm      *helmRequest      `json:"helm,omitempty"`
	// the controller's answer to a lookup frame (op "lookup-answer"), read mid-render (lookup.go)
	Answer *lookupAnswer `json:"answer,omitempty"`
}

type response struct {
	ID       uint64            `json:"id"`
	OK       bool              `json:"ok"`
	YAML     string            `json:"yaml,omitempty"`
	Objects  string            `json:"objects,omitempty"`
	Kind     string            `json:"kind,omitempty"`
	Error    string            `json:"error,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`
	// a question to the controller mid-render (lookup.go), not an answer
	Lookup *lookupQuery `json:"lookup,omitempty"`
}

func main() {
	// the controller gone (crashed, killed), its workers go too, even one busy in an endless template. A
	// controller that died before this line is seen as the end of stdin (the worker reads it first and exits
	// on EOF). Not by asking whether the parent is now PID 1: in a container the controller itself is PID 1,
	// and every worker it started exited at once (e2e/image-runc asks a worker its versions from PID 1).
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	// Frames go to the stdout the controller reads; anything a library prints goes to stderr instead.
	frames, err := unix.Dup(1)
	if err != nil {
		fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
		os.Exit(2)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
		os.Exit(2)
	}
	os.Stdout = os.Stderr
	// a template that recurses without end dies here ("goroutine stack exceeds"), well inside RLIMIT_AS
	debug.SetMaxStack(128 << 20)
	// Every render ends with a forced collection (below). At Go's default GOGC (100) a kustomize build of a
	// small overlay (~2.5 MiB allocated over a ~3.3 MiB live heap) also crossed the heap target mid-render: two
	// collections a render, 8.9 ms of CPU instead of 5.0, for the same peak (bench/HISTORY.md, session 21).
	// 200 leaves room for a small render between the forced collections; GOMEMLIMIT still bounds the heap.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}

	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.NewFile(uintptr(frames), "frames"))
	for {
		req, err := readFrame(in)
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
			os.Exit(2)
		}
		res := serve(req, &lookupChannel{in: in, out: out, id: req.ID})
		if err := writeFrame(out, res); err != nil {
			fmt.Fprintf(os.Stderr, "render-worker: %v\n", err)
			os.Exit(2)
		}
		if res.Kind == "panic" {
			os.Exit(3)
		}
		// the output just sent is garbage now: give it back before the next render counts against GOMEMLIMIT
		runtime.GC()
	}
}

func serve(req request, ask *lookupChannel) (res response) {
	res.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			res = response{ID: req.ID, Kind: "panic", Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var yaml, objects []byte
	var err error
	switch {
	case req.Op == "version":
		return response{ID: req.ID, OK: true, Versions: versions()}
	case req.Op == "kustomize" && req.Kustomize != nil:
		var m resmap.ResMap
		if m, err = kustomizeBuild(*req.Kustomize); err == nil {
			yaml, objects, err = buildOutput(m.Resources(), req.Objects)
		}
	case req.Op == "helm" && req.Helm != nil:
		if yaml, err = helmTemplate(*req.Helm, ask); err == nil && req.Objects {
			objects = helmObjects(yaml)
		}
	default:
		return response{ID: req.ID, Kind: "failed", Error: fmt.Sprintf("unknown op %q", req.Op)}
	}
	if err != nil {
		return response{ID: req.ID, Kind: "failed", Error: err.Error()}
	}
	if req.MaxOutputBytes > 0 && len(yaml) > req.MaxOutputBytes {
		return response{ID: req.ID, Kind: "too-large", Error: fmt.Sprintf("%d bytes of output", len(yaml))}
	}
	if objects != nil && (req.MaxOutputBytes <= 0 || len(objects) <= req.MaxOutputBytes) {
		return response{ID: req.ID, OK: true, Objects: string(objects)}
	}
	return response{ID: req.ID, OK: true, YAML: string(yaml)}
}

// versions: the library modules this worker was built with (the controller adds the binary's identity).
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			switch dep.Path {
			case "sigs.k8s.io/kustomize/api", "sigs.k8s.io/kustomize/kyaml", "helm.sh/helm/v4":
				v[dep.Path] = dep.Version
			}
		}
	}
	return v
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
	// not HTML-escaped: a '<' in the output stays one byte (json.Marshal would write six), so a frame stays
	// within the twice-the-output bound the controller reads it with (escaped quotes and backslashes)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err := binary.Write(w, binary.BigEndian, uint32(len(body))); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Flush()
}
