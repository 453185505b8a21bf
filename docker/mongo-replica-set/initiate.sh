#!/bin/bash
# One-shot service of the cluster topology (compose.cluster.yaml): makes mongo, mongo-2 and
# mongo-3 one replica set, then waits until it has a primary. Idempotent: a replica set that is
# already initiated is left as it is, so it runs on every `up`. Connects to the first member
# over TLS with the healthcheck's client certificate, as the administrator the image created on
# that member's first boot (the other members start empty and copy everything from it).
set -euo pipefail
ADMIN_PASSWORD="$(cat /run/cybercom/mongo/admin-password)" \
exec mongosh --quiet --norc "mongodb://mongo:27017/admin?directConnection=true" \
  --tls --tlsCAFile /run/cybercom/mongo/ca.pem --tlsCertificateKeyFile /run/cybercom/mongo/health-client.pem \
  --eval '
  const NOT_YET_INITIALIZED = 94;
  db.getSiblingDB("admin").auth("cybercom-admin", process.env.ADMIN_PASSWORD);
  // The first member is preferred as primary: its port is the one published on the host.
  const config = {
    _id: "cybercom",
    members: [
      { _id: 0, host: "mongo:27017", priority: 2 },
      { _id: 1, host: "mongo-2:27017", priority: 1 },
      { _id: 2, host: "mongo-3:27017", priority: 1 },
    ],
  };
  let initiated = true;
  try {
    rs.status();
  } catch (error) {
    if (error.code !== NOT_YET_INITIALIZED) throw error;
    initiated = false;
  }
  if (initiated) {
    print("replica set cybercom: already initiated");
  } else {
    const reply = db.adminCommand({ replSetInitiate: config });
    if (reply.ok !== 1) throw new Error("replSetInitiate: " + JSON.stringify(reply));
    print("replica set cybercom: initiated with " + config.members.map((m) => m.host).join(", "));
  }
  for (let waited = 0; waited < 180; waited++) {
    const primary = rs.status().members.find((m) => m.stateStr === "PRIMARY");
    if (primary) {
      print("replica set cybercom: primary " + primary.name);
      quit(0);
    }
    sleep(1000);
  }
  throw new Error("replica set cybercom: no primary after 180 s");
'
