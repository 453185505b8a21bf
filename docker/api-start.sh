#!/bin/sh
# Starts the API server with the memory settings every API process of the service gets (a small
# young generation, two malloc arenas, large blocks mapped). The values are the service's own
# (`cybercom memory-env`), the same the local runtime's supervisor applies, so both runtimes take
# them from one place; an operator's NODE_OPTIONS flag or MALLOC_* variable in the compose file wins.
set -eu
cd /app
eval "$(node dist/src/cli.js memory-env)"
exec node dist/src/cli.js serve "$@"
