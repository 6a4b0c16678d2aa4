# toolenv as a container: built in a Rust image, run from a small non-root
# runtime image (distroless: no shell, no package manager; SQLite is compiled
# in, TLS is rustls, so only the C runtime is needed).
#
#   docker build -t toolenv .
#   docker run --rm -p 50051:50051 toolenv                      # one process, runs kept in memory
#   docker run --rm -p 50051:50051 -e TOOLENV_STORE=postgres://… toolenv serve --addr 0.0.0.0:50051   # a replica
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolenv-cli --bin toolenv \
    && cp target/release/toolenv /toolenv

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /toolenv /usr/local/bin/toolenv
USER nonroot:nonroot
EXPOSE 50051 9464
ENTRYPOINT ["/usr/local/bin/toolenv"]
CMD ["serve", "--addr", "0.0.0.0:50051", "--no-store"]
