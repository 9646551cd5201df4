# One image for every process: the API by default; the worker with
#   node dist/apps/worker/src/main.js
# and migrations alone with
#   node dist/apps/cli/src/migrate.js
# Untested here (no Docker engine on the development machines).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
COPY migrations migrations
COPY bench bench
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKER_PORT=3001 \
    LOG_FORMAT=json \
    MALLOC_MMAP_THRESHOLD_=98304
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# Migrations are compiled into dist/ (migrations/index.ts), so the sources stay behind.
COPY --from=build /app/dist dist
USER node
EXPOSE 3000 3001
# No curl in the image: Node's own fetch. The worker's check (WORKER_PORT) is set in docker-compose.yml.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself, so it drains within SHUTDOWN_TIMEOUT_MS.
# The API's node flag and glibc setting: libs/lifecycle/src/api-process.ts.
CMD ["node", "--max-semi-space-size=16", "dist/apps/api/src/main.js"]
