#!/usr/bin/env bash
# run every built variant's probe (see scan_variants.sh)
for d in /tmp/scanvar/*/; do
  echo "== $(basename "$d")"
  "$d/probe" "$@" | grep -v "^n=" || true
done
