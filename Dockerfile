# utilityd on Debian 12.
#   docker build -t utilityd:0.1.0 .
#   docker run --read-only -p 50051:50051 -p 8080:8080 utilityd:0.1.0
# With podman, build in Docker's image format so the HEALTHCHECK is kept:
#   podman build --format docker -t utilityd:0.1.0 .
# `make test-container` builds and runs this file as shipped (docs/CONTAINER.md).
# Behaviour sets are read from /etc/utilityd/behaviour_sets: the bundled
# examples are baked in; mount your own directory there to replace them
# (utilityd reloads it when files change).
# The inspector on the published admin port needs a token (it answers 403
# without one): mount a file and add --admin_token_file=FILE, or pass
# --inspector=false. Metrics and probes need none.

# Build with the same install script the README and the tests use, in its
# build mode: the compiler and the libraries, none of the test tools.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh build
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DUTILITYD_BUILD_TESTS=OFF -DUTILITYD_BUILD_BENCH=OFF \
      -DUTILITYD_CONFIG_DIR_DEFAULT=/etc/utilityd/behaviour_sets \
 && cmake --build /build -j2 \
 && cmake --install /build --prefix /opt/utilityd

# Runtime: only the shared libraries the binaries link.
FROM debian:12-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libabsl20220623 libprotobuf32 libyaml-cpp0.7 \
      libcpp-httplib0.11 libmicrohttpd12 libprometheus-cpp-core1.0 libhwy1 \
      libtinyxml2-9 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home utilityd
COPY --from=build /opt/utilityd/bin/utilityd /opt/utilityd/bin/utilityctl \
     /opt/utilityd/bin/utilityd-sim /usr/local/bin/
COPY examples/behaviour_sets /etc/utilityd/behaviour_sets
USER 10001
EXPOSE 50051 8080
HEALTHCHECK --interval=10s --timeout=4s --start-period=5s --retries=3 \
  CMD ["utilityctl", "health", "--target=127.0.0.1:50051", "--timeout=3s"]
ENTRYPOINT ["utilityd"]
CMD ["--config_dir=/etc/utilityd/behaviour_sets", "--grpc_address=0.0.0.0:50051", "--http_address=0.0.0.0:8080"]
