# phasebridge: the bridge and its workers. Build: docker build -t phasebridge .
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ git \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The bundle starts in well under a second; the TypeScript sources through tsx take longer.
RUN node scripts/build.mjs
ENV PHASEBRIDGE_HOME=/data PHASEBRIDGE_HOST=0.0.0.0
# Owned by the image's `node` user, so a container run as it (the compose `ha` profile) can
# write the volumes mounted there (a new named volume takes this ownership).
RUN mkdir -p /data /workspaces && chown node:node /data /workspaces
VOLUME ["/data", "/workspaces"]
EXPOSE 7717
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
