# utilityd on Debian 12: builds the service and tools, then packages them
# with the example behaviour sets in a slim runtime image.
#   docker build -t utilityd . && docker run -p 50051:50051 utilityd
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DUTILITYD_BUILD_TESTS=OFF -DUTILITYD_BUILD_BENCH=OFF \
      -DUTILITYD_DEFAULT_CONFIG_DIR=/etc/utilityd/behaviour_sets \
 && cmake --build /build -j2 \
 && cmake --install /build --prefix /opt/utilityd

FROM debian:12-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libabsl20220623 libprotobuf32 libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 utilityd
COPY --from=build /opt/utilityd/bin/utilityd /opt/utilityd/bin/utilityctl \
     /opt/utilityd/bin/utilityd-sim /usr/local/bin/
COPY examples/behaviour_sets /etc/utilityd/behaviour_sets
USER 10001
EXPOSE 50051
ENTRYPOINT ["utilityd"]
CMD ["--config_dir=/etc/utilityd/behaviour_sets", "--grpc_address=0.0.0.0:50051"]
