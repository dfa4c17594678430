# Builds utilityd's tools on Debian 12 and packages them with the example
# behaviour sets. (The gRPC service is added here when it exists.)
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DUTILITYD_BUILD_TESTS=OFF -DUTILITYD_BUILD_BENCH=OFF \
 && cmake --build /build -j2 \
 && cmake --install /build --prefix /opt/utilityd

FROM debian:12-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libabsl20220623 libprotobuf32 libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 utilityd
COPY --from=build /opt/utilityd/bin/utilityctl /usr/local/bin/utilityctl
COPY examples/behaviour_sets /etc/utilityd/behaviour_sets
USER 10001
ENTRYPOINT ["utilityctl"]
CMD ["validate", "/etc/utilityd/behaviour_sets"]
