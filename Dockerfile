# phasebridge: the bridge and its workers. Build: docker build -t phasebridge .
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ git \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV PHASEBRIDGE_HOME=/data PHASEBRIDGE_HOST=0.0.0.0
VOLUME ["/data", "/workspaces"]
EXPOSE 7717
ENTRYPOINT ["node", "bin/phasebridge.js"]
CMD ["serve"]
