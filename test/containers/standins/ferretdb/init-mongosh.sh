#!/bin/bash
# `mongosh` as the init scripts of /docker-entrypoint-initdb.d see it in the FerretDB stand-in
# (put first on PATH by docker-entrypoint.sh during initialization only):
#   - logs in as the root user: mongod's init phase runs without access control, FerretDB's
#     cannot, so scripts written for the mongo image call mongosh without credentials;
#   - makes createUser/updateUser drop `roles`, which FerretDB v1 does not implement (it has no
#     authorization at all: any logged-in user may do anything). The product's own code does the
#     same for FerretDB (src/ops/appliance/database-users.ts).
set -euo pipefail
real=/usr/local/bin/mongosh
preamble='(() => {
  const proto = Object.getPrototypeOf(db);
  const createUser = proto.createUser, updateUser = proto.updateUser;
  proto.createUser = function (user, ...rest) { return createUser.call(this, { ...user, roles: [] }, ...rest); };
  proto.updateUser = function (name, update, ...rest) { const { roles, ...others } = update ?? {}; return updateUser.call(this, name, others, ...rest); };
})();'
auth=()
if [[ -n ${INIT_MONGOSH_USER:-} ]]; then
  auth=(--username "$INIT_MONGOSH_USER" --password "$INIT_MONGOSH_PASSWORD" --authenticationDatabase admin)
fi
exec "$real" "${auth[@]}" --eval "$preamble" "$@"
