# The shardql gateway (and its CLI), run from its build (scripts/build.mjs: dist/cli.mjs).
#   docker build -t shardql . && docker run -e SHARDQL_… shardql            → the gateway on :4000
#   docker run … shardql bin/shardql topology show                          → any CLI command
FROM node:20-slim

WORKDIR /app

# Dependencies first, so editing the source does not reinstall them. All of them: esbuild, which
# builds the source, is a devDependency. (NODE_ENV=production would make `npm ci` leave it out.)
COPY package.json package-lock.json ./
# npm ci runs the postinstall patch of installed packages (scripts/patch-deps.mjs).
COPY scripts/patch-deps.mjs scripts/
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .
# The build, once, as root: bin/shardql would rebuild a stale one, which the `node` user cannot write.
RUN node scripts/build.mjs

USER node
ENV SHARDQL_HOST=0.0.0.0 \
    SHARDQL_PORT=4000
EXPOSE 4000

# bin/shardql execs node (so node gets docker stop's SIGTERM and stops the gateway gracefully) with
# the young-generation size and source maps of every other start (see bin/shardql).
CMD ["bin/shardql", "serve"]
