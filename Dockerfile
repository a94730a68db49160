# The mailverify server's image (docs/deployment.md, "Container"):
#
#   docker build -t mailverify .
#   docker run -d --name mailverify --env-file mailverify.env -p 127.0.0.1:8080:8080 -v mailverify-data:/data mailverify
#
# Two stages: `build` installs every dependency, builds and packs the package(s) as npm would publish them; the
# image is the runtime stage, which installs those tarballs with production dependencies only, as a user of the
# published package would (docs/deployment.md, "Install"), so the image runs what npm users run.
#
# Base: Node.js 24 (the LTS line with the longest support left, to April 2028; CI tests it) on Debian 12 "bookworm",
# in the official image's slim variant, which has node and npm and nothing the server does not need. The native
# modules (libsql, argon2) come prebuilt for glibc, so no compiler is needed in either stage. Another base built the
# same way (node:22-bookworm-slim, a mirror of the official images) can be given with --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=node:24-bookworm-slim

# --- manifests: the package.json files and the lock alone, wherever they are (the root and any workspace) ---
# Copied on their own so that the `npm ci` layer below is taken from the cache while they do not change, whatever
# else does; finding them by name keeps this stage independent of the repository's layout.
FROM ${NODE_IMAGE} AS manifests
COPY . /src
RUN find /src -type f ! -name package.json ! -name package-lock.json -delete \
 && find /src -depth -mindepth 1 -type d -empty -delete

# --- build: every dependency, the build, and the tarballs `npm pack` makes ---
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY --from=manifests /src ./
RUN npm ci --no-audit --no-fund --no-update-notifier
COPY . .
# LAYOUT: one package at the root, or (once the repository is split into npm workspaces) one tarball per workspace.
# `npm run build` has built them already: --ignore-scripts skips the prepack script's second build.
RUN npm run build \
 && mkdir /packs \
 && if node -e 'process.exit(require("./package.json").workspaces ? 0 : 1)'; then \
      npm pack --workspaces --ignore-scripts --pack-destination /packs; \
    else \
      npm pack --ignore-scripts --pack-destination /packs; \
    fi

# --- runtime: the packed package(s) installed with production dependencies only ---
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="mailverify" \
      org.opencontainers.image.description="Email address verification server (REST API)" \
      org.opencontainers.image.source="https://github.com/mailverify/mailverify" \
      org.opencontainers.image.licenses="MIT"
ENV NODE_ENV=production
# tini, Docker's own init (what `docker run --init` adds), from Debian: PID 1 passes SIGTERM on to the server. Node.js
# as PID 1 itself would miss a SIGTERM that arrives while it starts, before the server listens for it (the kernel
# drops signals without a handler for PID 1): `docker stop` would then wait its 10 s and SIGKILL (exit code 137).
# Under tini such an early SIGTERM ends node at once; `-e 143` makes that exit (128 + SIGTERM) a clean 0.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
WORKDIR /app
COPY --from=build /packs /tmp/packs
# Installed by root, so that the program is read-only to the user that runs it. Then left out, as nothing reads
# them at run time: source maps and type declarations (the server starts without --enable-source-maps), READMEs and
# changelogs, the dependencies' own tests, examples and benchmarks, the musl build of libsql (this image is glibc's),
# exceljs's browser bundles (Node.js loads its lib/), and npm's cache. (Folders named doc or docs stay: some
# packages keep code there.) The container test loads every dependency in the image to show nothing needed went. The data folder is made for the user node (uid 1000, the base image's), readable by it only.
RUN echo '{ "name": "mailverify-image", "private": true }' > package.json \
 && npm install --omit=dev --no-audit --no-fund --no-update-notifier /tmp/packs/*.tgz \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \
      -o -iname 'README*.md' -o -iname 'CHANGELOG*.md' -o -iname 'HISTORY.md' \) -delete \
 && find node_modules -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name example -o -name examples \
      -o -name benchmark -o -name benchmarks -o -name .github \) -exec rm -rf {} + \
 && rm -rf node_modules/@libsql/*-musl node_modules/exceljs/dist \
 && npm cache clean --force 2>/dev/null \
 && rm -rf /tmp/packs /root/.npm \
 && install -d -o node -g node -m 0700 /data
COPY deploy/healthcheck.mjs /app/healthcheck.mjs

# The server listens on every interface of the container, on 8080, and keeps its SQLite store in /data. Every option
# is a MAILVERIFY_* variable (README, "Configuration"); the root password has no default: give
# MAILVERIFY_ROOT_PASSWORD (an --env-file) or MAILVERIFY_ROOT_PASSWORD_FILE (a mounted secret).
ENV PATH=/app/node_modules/.bin:$PATH \
    MAILVERIFY_HOST=0.0.0.0 \
    MAILVERIFY_PORT=8080 \
    MAILVERIFY_DATA_DIR=/data
USER node
VOLUME /data
EXPOSE 8080

# GET /health through node (the image has no curl); it reads MAILVERIFY_PORT and MAILVERIFY_BASE_PATH as the
# server does. A worker (`mailverify worker`, which answers no HTTP) is checked with `node /app/healthcheck.mjs worker`.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/healthcheck.mjs"]

# The installed bin in exec form under tini, no shell or npm in between (its `#!/usr/bin/env node` execs node):
# docker stop's SIGTERM reaches the server, which stops with exit code 0 within 10 s (docker stop waits 10 s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["tini", "-e", "143", "--", "mailverify"]
CMD ["serve"]
