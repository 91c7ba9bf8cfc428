package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/resource"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// kustomize's output as JSON objects (issue 27), so the controller reads them with JSON.parse instead of its YAML
// reader (src/core/render/parse.ts, ~4 ms of the controller's CPU a render). Each document is decoded with
// sigs.k8s.io/yaml, the decoder kubectl reads `kustomize build | kubectl apply -f -` with; parse.ts follows the same
// go-yaml v2 rules, so the objects are the same (test/render/worker-golden.test.ts). Where the two could
// disagree, or the controller's reader has something to say, the YAML goes instead and the controller judges it
// with its own messages: an explicit tag or an alias, a repeated key, a number JSON cannot carry exactly
// (.inf, .nan, an integer past 2^53).
//
// The keys of each object come sorted (Go's maps): an object's keys carry no order for the API server.

// jsonExactLimit: the largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
const jsonExactLimit = 1<<53 - 1

// buildOutput joins the resources' YAML as `kustomize build` prints it (resmap.AsYaml) and, with asObjects, gives
// the same documents as one JSON array, or nil where the YAML must go instead.
func buildOutput(resources []*resource.Resource, asObjects bool) (text []byte, objects []byte, err error) {
	docs := make([][]byte, len(resources))
	for i, r := range resources {
		if docs[i], err = r.AsYAML(); err != nil {
			return nil, nil, err
		}
	}
	text = bytes.Join(docs, []byte("---\n"))
	if !asObjects {
		return text, nil, nil
	}
	var out bytes.Buffer
	out.WriteByte('[')
	for i, r := range resources {
		if !plainNodes(r.YNode()) {
			return text, nil, nil
		}
		object, err := yaml.YAMLToJSONStrict(docs[i])
		if err != nil || !exactNumbers(object) {
			return text, nil, nil
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(object)
	}
	out.WriteByte(']')
	return text, out.Bytes(), nil
}

// plainNodes: no explicit tag and no alias anywhere in the tree (the controller's reader refuses some tags and
// bounds aliases; it decides those).
func plainNodes(n *kyaml.Node) bool {
	if n == nil {
		return true
	}
	if n.Style&kyaml.TaggedStyle != 0 || n.Kind == kyaml.AliasNode || n.Anchor != "" {
		return false
	}
	for _, c := range n.Content {
		if !plainNodes(c) {
			return false
		}
	}
	return true
}

// exactNumbers: every number in the JSON text is one a JavaScript number holds as written (an integer-valued
// number past 2^53 would be changed by JSON.parse; the controller's reader refuses it and says where).
func exactNumbers(object []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(object))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			f, err := n.Float64()
			if err != nil || math.IsInf(f, 0) || math.Abs(f) > jsonExactLimit {
				return false
			}
		}
	}
}

// helm template's output as objects: one {"source":…,"object":…} per document, split as the controller splits it
// (src/core/render/built.ts objectsOfHelmOutput: at bare `---` lines, the first `# Source:` line of each piece
// naming its template). nil where the YAML must go instead: a piece holding more than one document, a line
// ending the controller's regular expressions and Go's read differently, and objects.go's rules for each piece
// (a test hook is left for the controller to drop, as it drops it from the YAML).
func helmObjects(manifest []byte) []byte {
	if bytes.ContainsAny(manifest, "\r\u2028\u2029") {
		return nil
	}
	var out bytes.Buffer
	out.WriteByte('[')
	first := true
	for _, piece := range documentSeparator.Split(string(manifest), -1) {
		if otherMarker.MatchString(piece) {
			return nil
		}
		var node kyaml.Node
		if err := kyaml.Unmarshal([]byte(piece), &node); err != nil || !plainNodes(&node) {
			return nil
		}
		object, err := yaml.YAMLToJSONStrict([]byte(piece))
		if err != nil || !exactNumbers(object) {
			return nil
		}
		if string(object) == "null" {
			continue
		}
		entry := struct {
			Source string          `json:"source,omitempty"`
			Object json.RawMessage `json:"object"`
		}{Object: object}
		if m := sourceLine.FindStringSubmatch(piece); m != nil {
			entry.Source = strings.TrimSpace(m[1])
		}
		encoded, err := json.Marshal(entry)
		if err != nil {
			return nil
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		out.Write(encoded)
	}
	out.WriteByte(']')
	return out.Bytes()
}

var (
	// the controller's /^---[ \t]*$/m
	documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
	// any other document start or end within a piece: more than one document, which the controller's reader reads
	otherMarker = regexp.MustCompile(`(?m)^(---|\.\.\.)`)
	// the controller's /^# Source: (.+)$/m, first match
	sourceLine = regexp.MustCompile(`(?m)^# Source: (.+)$`)
)
