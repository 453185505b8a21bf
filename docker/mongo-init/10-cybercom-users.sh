#!/bin/bash
# Sourced by the official mongo image's entrypoint on the first start of an empty data volume,
# while a loopback-only mongod without TLS or authentication runs. Creates the two custom roles
# and the API's and the workers' users (the administrator comes from MONGO_INITDB_ROOT_*). The
# installer brings roles and passwords up to date on every run afterwards
# (src/ops/appliance/database-users.ts, whose documents these are; a unit test compares them).
#
# Workers get only the result collection of the service database; the API adds each data-store
# database to their role as it creates it. They get nothing on users, groups, tokens or sessions.
set -euo pipefail
API_PASSWORD="$(cat /run/cybercom/mongo/api-password)" \
WORKER_PASSWORD="$(cat /run/cybercom/mongo/worker-password)" \
mongosh --quiet --host 127.0.0.1 --port 27017 admin --eval '
  const apiGrantsRole = {"createRole":"cybercom-api-grants","privileges":[{"resource":{"db":"","collection":""},"actions":["grantRole","revokeRole"]},{"resource":{"db":"admin","collection":""},"actions":["viewRole"]}],"roles":[]};
  const workerRole = {"createRole":"cybercom-worker-data","privileges":[{"resource":{"db":"cybercom","collection":"tombstone"},"actions":["createIndex","find","insert","listIndexes","remove","update"]}],"roles":[]};
  const apiRoles = [{"role":"readWriteAnyDatabase","db":"admin"},{"role":"dbAdminAnyDatabase","db":"admin"},{"role":"cybercom-api-grants","db":"admin"}];
  const workerRoles = [{"role":"cybercom-worker-data","db":"admin"}];
  for (const command of [apiGrantsRole, workerRole]) {
    const reply = db.runCommand(command);
    if (reply.ok !== 1) throw new Error(JSON.stringify(reply));
  }
  db.createUser({ user: "cybercom-api", pwd: process.env.API_PASSWORD, roles: apiRoles });
  db.createUser({ user: "cybercom-worker", pwd: process.env.WORKER_PASSWORD, roles: workerRoles });
'
