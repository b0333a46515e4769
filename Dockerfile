# The action's image: perfgate built static, on a slim Debian with what the
# gate drives: git (bases and trees), the docker CLI and compose (the arms'
# services, the sibling on the host's network, build_image), the PostgreSQL
# server binaries (the arms' store), bash (builds and legacy contracts) and
# tini (signals passed on, children reaped).
#
# Debian trixie (13): its docker CLI (26.1, API 1.45) and compose v2 (2.26)
# are new enough for Docker Engine 29, which refuses clients under API 1.44
# ("client version 1.41 is too old", GitHub's Ubuntu runner images move to
# it), and negotiate down to older engines (20.10, API 1.41, is tested).
# Bookworm's are 20.10 and the Python docker-compose 1.29.
#
# Both base images are build arguments, so the image builds where no
# registry is reachable (docs/action.md): BUILD_IMAGE needs Go unless the
# build context carries a perfgate already built as prebuilt/perfgate (for
# example `go build -ldflags "-X ...Version=v1.2.3" -o prebuilt/perfgate`).
ARG BUILD_IMAGE=golang:1.26-trixie
ARG BASE_IMAGE=debian:trixie-slim

FROM ${BUILD_IMAGE} AS build
# VERSION is what `perfgate version` prints. The runner builds `image:
# Dockerfile` without build arguments, so without one the version comes
# from a VERSION file in the context (a release writes it), else "dev".
ARG VERSION=
WORKDIR /src
COPY . .
RUN set -eu; mkdir -p /out; \
    if [ -x prebuilt/perfgate ]; then \
      cp prebuilt/perfgate /out/perfgate; \
    else \
      v="${VERSION:-$(cat VERSION 2>/dev/null || echo dev)}"; \
      CGO_ENABLED=0 go build -trimpath \
        -ldflags "-s -w -X github.com/perfgate/perfgate/internal/cli.Version=$v" \
        -o /out/perfgate ./cmd/perfgate; \
    fi

FROM ${BASE_IMAGE}
# The docker CLI alone (docker-cli, not the engine: the action drives the
# runner's engine through its socket) and compose v2. The cluster the
# postgresql package creates is dropped: the gate makes its own (initdb)
# for each run.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bash ca-certificates git docker-cli docker-compose postgresql tini \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* \
 && pg_lsclusters -h | while read -r version name _; do pg_dropcluster --stop "$version" "$name"; done
# The runner's checkout belongs to the runner's user, not to this image's
# root: without this git refuses it ("dubious ownership").
RUN git config --system --add safe.directory '*'
COPY --from=build /out/perfgate /usr/local/bin/perfgate
WORKDIR /github/workspace
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/perfgate", "action"]
