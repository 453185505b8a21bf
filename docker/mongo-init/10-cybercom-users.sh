#!/bin/bash
# Sourced by the official mongo image's entrypoint on the first start of an empty data volume,
# while a loopback-only mongod without TLS or authentication runs. Creates the API's and the
# workers' users (the administrator comes from MONGO_INITDB_ROOT_*). The installer brings the
# passwords up to date on every run afterwards (src/ops/appliance/database-users.ts).
set -euo pipefail
API_PASSWORD="$(cat /run/cybercom/mongo/api-password)" \
WORKER_PASSWORD="$(cat /run/cybercom/mongo/worker-password)" \
mongosh --quiet --host 127.0.0.1 --port 27017 admin --eval '
  db.createUser({ user: "cybercom-api", pwd: process.env.API_PASSWORD,
    roles: [{ role: "readWriteAnyDatabase", db: "admin" }, { role: "dbAdminAnyDatabase", db: "admin" }] });
  db.createUser({ user: "cybercom-worker", pwd: process.env.WORKER_PASSWORD,
    roles: [{ role: "readWriteAnyDatabase", db: "admin" }] });
'
