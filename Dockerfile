# One image for every trailmap process, built only from Debian's packages.
#   docker build -t trailmap .     (docker-compose.yml builds it for you)
FROM debian:bookworm AS build
COPY scripts/install-deps /src/scripts/install-deps
RUN /src/scripts/install-deps
COPY . /src
RUN cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DTRAILMAP_TESTS=OFF -DTRAILMAP_BENCH=OFF \
 && cmake --build /build -j "$(nproc)" \
 && install -D -t /usr/local/bin /build/bin/trailmap-agent /build/bin/trailmap-aggregator \
      /build/bin/trailmap /build/bin/trailmap-query /build/bench/trailmap-loadgen

FROM debian:bookworm
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libzmq5 libcapnp-0.9.2 librocksdb7.8 libfmt9 \
      libfreetype6 fonts-dejavu-core libprotobuf32 libre2-9 libpng16-16 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/ /usr/local/bin/
COPY configs/ /etc/trailmap/
