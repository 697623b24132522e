# Source this file (`. scripts/use-node.sh`) to get a supported Node (>= 22) in this shell: the
# machine's when it is new enough, otherwise Node 24 from the npm registry, cached in .node/24
# (scripts/node.sh). Native addons then build against that Node's headers.
_spool_bin=$(bash "$(dirname "${BASH_SOURCE[0]:-$0}")/node.sh") || return 1 2>/dev/null || exit 1
if [ -n "$_spool_bin" ]; then
  export PATH="$_spool_bin:$PATH" npm_config_nodedir="${_spool_bin%/bin}"
fi
unset _spool_bin
node --version
