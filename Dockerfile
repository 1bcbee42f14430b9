# The swarm-sweep controller: one static binary and nothing else.
#
# Built by deploy/build-image, which first builds the binary on the host
# (cargo build --release --target x86_64-unknown-linux-musl) and then hands
# docker a context holding only this file and that binary: with nothing to
# pull and nothing to run, the build needs no network.
FROM scratch

ARG VERSION=unknown
LABEL org.opencontainers.image.title="swarm-sweep" \
      org.opencontainers.image.description="Deletes what GitOps-deployed Docker Swarm applications left behind" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"

# Owned by root and not writable by the user below, so the process cannot
# replace its own binary.
COPY swarm-sweep /swarm-sweep

# Where `watch --state` keeps its file (deploy/stack.yml mounts a named
# volume here). A new volume starts as a copy of this directory, owner
# included, so the user below can write its state without being root.
COPY --chown=65532:65532 state/ /var/lib/swarm-sweep/

# A numeric user: a scratch image has no /etc/passwd to look a name up in.
# It reaches the docker socket only where the socket's group is given to it
# (deploy/stack.yml, `user:`); see docs/guide.md, "Image and stack file".
USER 65532:65532

# `watch --listen 0.0.0.0:9090` serves /healthz, /readyz and /metrics here.
EXPOSE 9090

ENTRYPOINT ["/swarm-sweep"]
CMD ["--help"]
