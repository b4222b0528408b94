#!/usr/bin/env bash
# End-to-end check of docker-compose.yml: builds the image, brings up PostgreSQL, Redis, two
# instances and nginx under their own project name and volumes, starts a webhook receiver on the
# stack's network, runs scripts/compose-smoke.ts through nginx, then takes everything down
# (volumes included). Last, PostgreSQL is stopped: readiness through nginx must turn 503 and come
# back to 200 once it is started again, without the instances restarting. KEEP=1 leaves the stack
# running. Needs Docker with `docker compose` or
# `docker-compose`, and this checkout's `npm ci` (the scenario runs on the host with tsx).
#   scripts/compose-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-ams-smoke}
export AMS_HTTP_PORT=${AMS_HTTP_PORT:-18080}
export PUBLIC_URL=http://localhost:$AMS_HTTP_PORT
# The receiver's address is private (the stack's network): allow that one host name only.
export WEBHOOK_ALLOW_HOSTS=webhook-receiver
receiver=$COMPOSE_PROJECT_NAME-webhook-receiver
receiver_port=${RECEIVER_PORT:-18090}

cleanup() {
  local status=$?
  docker rm -f "$receiver" >/dev/null 2>&1 || true
  if [[ ${KEEP:-} == 1 ]]; then
    echo "smoke: stack left running (KEEP=1): ${compose[*]} -p $COMPOSE_PROJECT_NAME down -v"
  else
    [[ $status -ne 0 ]] && "${compose[@]}" logs --tail=40 app1 app2 nginx || true
    "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  exit $status
}
trap cleanup EXIT

echo "smoke: building and starting the stack (${compose[*]}, project $COMPOSE_PROJECT_NAME)"
"${compose[@]}" build
"${compose[@]}" up -d

# A receiver that keeps every request it gets and lists them at GET /received.
docker rm -f "$receiver" >/dev/null 2>&1 || true
docker run -d --name "$receiver" --network "${COMPOSE_PROJECT_NAME}_default" --network-alias webhook-receiver \
  -p "127.0.0.1:$receiver_port:9000" node:20-slim node -e '
const received = []
require("node:http").createServer((req, res) => {
  let body = ""
  req.on("data", (c) => (body += c))
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/received") { res.setHeader("content-type", "application/json"); return res.end(JSON.stringify(received)) }
    received.push({ headers: req.headers, body })
    res.statusCode = 204
    res.end()
  })
}).listen(9000)' >/dev/null

echo "smoke: waiting for http://127.0.0.1:$AMS_HTTP_PORT/health/ready"
for i in $(seq 1 180); do
  curl -sf "http://127.0.0.1:$AMS_HTTP_PORT/health/ready" >/dev/null 2>&1 && break
  [[ $i == 180 ]] && { echo "smoke: FAILED: the stack was not ready within 180 s"; "${compose[@]}" ps; exit 1; }
  sleep 1
done
"${compose[@]}" ps

ip_of() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$("${compose[@]}" ps -q "$1")"; }
npx tsx scripts/compose-smoke.ts "http://127.0.0.1:$AMS_HTTP_PORT" "http://$(ip_of app1):3000" "http://$(ip_of app2):3000" \
  "http://127.0.0.1:$receiver_port"

base=http://127.0.0.1:$AMS_HTTP_PORT
status_of() { curl -s -o /dev/null -w '%{http_code}' "$base/health/ready" || true; }
wait_status() {
  for _ in $(seq 1 "$2"); do [[ $(status_of) == "$1" ]] && return 0; sleep 1; done
  echo "smoke: FAILED: /health/ready did not answer $1 within $2 s (last: $(status_of))"; exit 1
}
started() { docker inspect -f '{{.State.StartedAt}}' "$("${compose[@]}" ps -q app1)" "$("${compose[@]}" ps -q app2)"; }
before=$(started)
"${compose[@]}" stop postgres >/dev/null 2>&1
wait_status 503 60
echo "smoke: PostgreSQL stopped: /health/ready through nginx answers 503"
"${compose[@]}" start postgres >/dev/null 2>&1
wait_status 200 120
[[ $(started) == "$before" ]] || { echo "smoke: FAILED: an instance restarted"; exit 1; }
echo "smoke: PostgreSQL back: /health/ready 200 again, neither instance restarted"
echo "smoke: ALL PASSED"
