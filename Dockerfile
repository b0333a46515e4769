# The action's image: perfgate built static, on a slim Debian with what the
# gate drives (git, the docker CLI and compose for the arms' services, the
# PostgreSQL server binaries for the arms' store, bash for legacy contracts).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/perfgate ./cmd/perfgate

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bash ca-certificates git docker.io docker-compose postgresql \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/perfgate /usr/local/bin/perfgate
# tini reaps what the arms leave behind; `perfgate action` splits the args
# input, runs the command and sets the verdict output.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /github/workspace
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/perfgate", "action"]
