// oci-registry is the CNCF distribution registry (github.com/distribution/distribution/v3) with only the
// pieces the tests use: the filesystem and in-memory storage drivers, htpasswd auth, and token auth (the
// `WWW-Authenticate: Bearer realm=…` flow Docker Hub, GHCR and ECR use; the tests run a small token
// server). Upstream's cmd/registry also links the S3, GCS and Azure drivers and the pull-through proxy,
// which more than double a cold build for code the tests never run. The serving code is upstream's own
// `registry` package, unchanged.
//
// `oci-registry htpasswd USER` reads a password on stdin and prints one bcrypt htpasswd line, so test
// setup needs neither apache2-utils nor python (bcrypt is what upstream's htpasswd auth accepts).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "htpasswd" {
		os.Exit(htpasswd(os.Args[2]))
	}
	// Upstream's root command: `oci-registry serve CONFIG.yml`.
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}

func htpasswd(user string) int {
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(os.Stderr, "htpasswd: no password on stdin")
		return 2
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(strings.TrimRight(line, "\r\n")), bcrypt.DefaultCost)
	if err != nil {
		fmt.Fprintln(os.Stderr, "htpasswd:", err)
		return 2
	}
	fmt.Printf("%s:%s\n", user, hash)
	return 0
}
