# syntax=docker/dockerfile:1
# The controller image: Node 24 runs the TypeScript sources directly (docs/adr/0002), so there is no
# build step — only production dependencies, the sources, git + ssh for fetching packages, and the
# upstream render tools (kustomize, helm, sops) built from their Go modules, and the launcher that confines them.
# hack/build-image.sh builds the same image without Docker and reads this file for everything the two
# could disagree on (hack/image/dockerfile.ts); test/image/dockerfile.test.ts checks the tools' versions
# and build flags here against hack/versions.env and hack/build-cluster.sh.

# Production dependencies only, resolved exactly from the lock file. Install scripts are skipped: no
# runtime dependency needs one, and none gets to run code at build time.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# The render tools the controller runs as subprocesses (docs/adr/0011), pinned as in hack/versions.env and
# built exactly as hack/build-cluster.sh builds them: static, trimmed, with the version the tool reports.
FROM golang:1.26-bookworm AS render-tools
ARG KUSTOMIZE_VERSION=v5.8.2
ARG HELM_VERSION=v4.3.1
ARG SOPS_VERSION=v3.13.3
ENV CGO_ENABLED=0 GOBIN=/out
RUN go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=kustomize/${KUSTOMIZE_VERSION}" sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}
RUN go install -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}" helm.sh/helm/v4/cmd/helm@${HELM_VERSION}
# sops decrypts spec.decryption's encrypted Secrets (docs/adr/0025)
RUN go install -trimpath -ldflags "-s -w" github.com/getsops/sops/v3/cmd/sops@${SOPS_VERSION}
# render-sandbox: our launcher that confines every render tool with Landlock and RLIMIT_AS (docs/adr/0033),
# built from this repository's source exactly as hack/build-cluster.sh builds it
COPY hack/render-sandbox/ /src/render-sandbox/
RUN cd /src/render-sandbox && go build -trimpath -ldflags "-s -w" -o /out/render-sandbox .
# render-worker: kustomize and the Helm SDK as libraries in a long-lived process (docs/adr/0038), its Helm
# version string set as the helm binary's, built as hack/build-cluster.sh builds it
COPY hack/render-worker/ /src/render-worker/
RUN cd /src/render-worker && go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}" -o /out/render-worker .
# render-worker-kustomize: the same sources without Helm's SDK, for kustomize renders (hack/render-worker/helm_off.go)
RUN cd /src/render-worker && go build -tags kustomizeonly -trimpath -ldflags "-s -w" -o /out/render-worker-kustomize .

FROM node:24-bookworm-slim
# git fetches packages; openssh-client serves ssh:// and scp-style URLs (and ssh-keygen verifies SSH-signed
# commits); ca-certificates verifies https; gpg verifies GPG-signed commits and tags (spec.source.verify).
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates gpg \
  && rm -rf /var/lib/apt/lists/*
# ssh refuses to run for a uid without a passwd entry ("No user exists for uid 65532"): give it one.
RUN groupadd --gid 65532 nonroot \
  && useradd --uid 65532 --gid 65532 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin nonroot
COPY --from=render-tools /out/kustomize /out/helm /out/sops /out/render-sandbox /out/render-worker /out/render-worker-kustomize /usr/local/bin/
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin/ ./bin/
# .dockerignore keeps tests and their fixtures out.
COPY src/ ./src/
# The web UI's bundle (the controller serves it with --ui-address, docs/ui.md): built before the image by
# `npm run build:ui` (hack/build-image.sh runs it), as esbuild is a build tool, not a production dependency.
COPY dist/ui/ ./dist/ui/
# The controller as one bundle of src/ (`npm run build:controller`, also run by hack/build-image.sh): node then
# strips no TypeScript at run time: 20–30 MiB less resident (docs/adr/0052). src/ stays for the CLI (bin/).
COPY dist/controller/ ./dist/controller/
USER 65532:65532
# The root filesystem is read-only in the pod; /tmp is its one writable volume (git cache, ssh, HOME).
ENV HOME=/tmp NODE_ENV=production
# A small young generation and V8's size-over-speed mode: the controller is mostly idle, waiting on the API
# server, so collecting often costs little time and keeps peak memory low (docs/adr/0010; bench/ reads these flags).
ENTRYPOINT ["node", "--max-semi-space-size=1", "--optimize-for-size", "/app/dist/controller/main.js"]
CMD ["controller"]
