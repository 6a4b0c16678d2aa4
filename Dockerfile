# toolenv as a container: built in a Rust image, run from a small non-root
# runtime image (distroless: no shell, no package manager; SQLite is compiled
# in, TLS is rustls, so only the C runtime is needed).
#
#   docker build -t toolenv .
#   docker run --rm -p 50051:50051 toolenv                      # one process, runs kept in memory
#   docker run --rm -v toolenv-data:/data toolenv run --faults 0.2 --trials 5   # runs stored in /data/toolenv.db
#   docker run --rm -p 50051:50051 -e TOOLENV_STORE=postgres://… -e TOOLENV_TOKEN toolenv serve --addr 0.0.0.0:50051   # a replica
#
# The working directory, /data, belongs to the image's user, so the default
# store (toolenv.db, relative to it) can be written; mount a volume there to
# keep the runs. Any other path needs TOOLENV_STORE or --store.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolenv-cli --bin toolenv \
    && cp target/release/toolenv /toolenv \
    && mkdir /data

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /toolenv /usr/local/bin/toolenv
# An empty directory owned by nonroot (65532): WORKDIR alone would create it
# owned by root, and SQLite could not create toolenv.db or its journal there.
COPY --from=build --chown=65532:65532 /data /data
WORKDIR /data
USER nonroot:nonroot
EXPOSE 50051 9464
ENTRYPOINT ["/usr/local/bin/toolenv"]
CMD ["serve", "--addr", "0.0.0.0:50051", "--no-store"]
