# shellcheck shell=bash
# Timed sub-steps for ops/prepare-local.sh and ops/build-engine.sh (sourced; the sourcing script
# sets STEP_PREFIX). Each step prints one line as it starts and one with its time as it ends, in
# a fixed shape the installer reads to show them as they happen:
#   <prefix>: [start] <name>
#   <prefix>: [done] <name> (<seconds> s)
# A step that fails prints nothing more: the script's own error line says why.

# timed_step NAME COMMAND [ARGS...]
timed_step() {
  local name="$1" started=$SECONDS
  shift
  printf '%s: [start] %s\n' "$STEP_PREFIX" "$name"
  "$@"
  printf '%s: [done] %s (%d s)\n' "$STEP_PREFIX" "$name" $((SECONDS - started))
}
