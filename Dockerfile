# The shardql gateway (and its CLI): TypeScript run directly by tsx, no build step.
#   docker build -t shardql . && docker run -e SHARDQL_… shardql            → the gateway on :4000
#   docker run … shardql node --import tsx src/cli.ts topology show        → any CLI command
FROM node:20-slim

WORKDIR /app

# Dependencies first, so editing the source does not reinstall them. All of them: tsx, which runs
# the source, is a devDependency. (NODE_ENV=production would make `npm ci` leave it out.)
COPY package.json package-lock.json ./
# npm ci runs the postinstall patch of installed packages (scripts/patch-deps.mjs).
COPY scripts/patch-deps.mjs scripts/
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .

USER node
ENV SHARDQL_HOST=0.0.0.0 \
    SHARDQL_PORT=4000
EXPOSE 4000

# The CLI stops the gateway gracefully on SIGTERM (docker stop).
# --max-semi-space-size: see bin/shardql (young-generation size; GC share of a warm request).
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "src/cli.ts", "serve"]
