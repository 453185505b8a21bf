# syntax=docker/dockerfile:1
# The API server image: compiled JavaScript, production dependencies only, runs as `node`
# (uid 1000) and works with a read-only root filesystem (compose mounts a volume for the admin
# site's component bundle and a tmpfs for /tmp). It carries the Python client's wheel, which it
# serves at /api/client/python/ for `pip install`, and the manual, served at /api/manual/. NODE_IMAGE and PYTHON_IMAGE replace the bases
# (tests build on locally made stand-ins).
ARG NODE_IMAGE=node:24-bookworm-slim
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# The Python client's wheel (pure Python: any interpreter builds the same file).
FROM ${PYTHON_IMAGE} AS client-wheel
WORKDIR /src
RUN pip install --no-cache-dir --disable-pip-version-check hatchling
COPY clients/python ./clients/python
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps --no-build-isolation -w /wheels ./clients/python

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.browser.json ./
COPY src ./src
RUN npm run build
# The admin site's browser bundle, built once here so a read-only container need not build it.
RUN mkdir -p /src/adminjs-bundle \
 && if npm run | grep -q '^  build:admin'; then ADMIN_BUNDLE_DIR=/src/adminjs-bundle NODE_ENV=production npm run build:admin; fi

# The manual, built for the path the API serves it at (/api/manual/), from the same packages.
COPY docs ./docs
COPY ops/build-manual.sh ./ops/build-manual.sh
RUN MANUAL_DIR=/src/manual bash ops/build-manual.sh

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
# The memory settings are applied by api-start.sh, from the service's own module.
ENV NODE_ENV=production \
    ADMIN_BUNDLE_DIR=/var/lib/cybercom/adminjs \
    CLIENT_DOWNLOADS_DIR=/app/client \
    MANUAL_DIR=/app/manual \
    HTTP_PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# The admin components' sources: AdminJS bundles them itself (tsc does not emit them).
COPY --from=build /src/src/admin/components ./src/admin/components
COPY --from=build /src/manual ./manual
COPY package.json ./
COPY docker/api-start.sh /usr/local/bin/cybercom-api-start
COPY --from=client-wheel /wheels /app/client/python
COPY --from=build --chown=node:node /src/adminjs-bundle /var/lib/cybercom/adminjs
USER node
EXPOSE 8080
VOLUME ["/var/lib/cybercom/adminjs"]
HEALTHCHECK --interval=15s --timeout=10s --start-period=60s --retries=12 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/api/health/',{headers:{accept:'application/json'}}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["cybercom-api-start"]
