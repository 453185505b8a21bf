#!/bin/bash
# Sourced by the official mongo image's entrypoint on the first start of an empty data volume,
# while a loopback-only mongod without TLS or authentication runs. Creates the two custom roles
# and the API's and the workers' users (the administrator comes from MONGO_INITDB_ROOT_*). The
# installer brings roles and passwords up to date on every run afterwards
# (src/installation/database-users.ts, whose documents these are; a unit test compares them).
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
  // A MongoDB-wire server without custom roles (FerretDB answers createRole with "no such
  // command") cannot enforce them anyway: its users get the built-in roles, as the installer
  // gives them there.
  const builtinApiRoles = [{"role":"readWriteAnyDatabase","db":"admin"},{"role":"dbAdminAnyDatabase","db":"admin"}];
  const builtinWorkerRoles = [{"role":"readWriteAnyDatabase","db":"admin"}];
  let customRoles = true;
  for (const command of [apiGrantsRole, workerRole]) {
    let reply;
    try {
      reply = db.runCommand(command);
    } catch (error) {
      if (error.code === 59 || /no such command/i.test(String(error.message))) { customRoles = false; break; }
      throw error;
    }
    if (reply.ok !== 1) throw new Error(JSON.stringify(reply));
  }
  if (!customRoles) print("this server has no custom roles: the API and workers get built-in roles");
  db.createUser({ user: "cybercom-api", pwd: process.env.API_PASSWORD, roles: customRoles ? apiRoles : builtinApiRoles });
  db.createUser({ user: "cybercom-worker", pwd: process.env.WORKER_PASSWORD, roles: customRoles ? workerRoles : builtinWorkerRoles });
'
