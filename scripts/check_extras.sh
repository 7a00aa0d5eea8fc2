#!/usr/bin/env bash
# Each install extra of the package (docs, jax, llm, models, ray), installed from the built wheel into a
# fresh virtual environment of its own with the pinned CPU torch, imports cleanly and runs the command
# that needs it. Usage: scripts/check_extras.sh WHEEL [EXTRA ...]   (default: every extra)
set -euo pipefail
wheel=$(realpath "$1"); shift
root=$(cd "$(dirname "$0")/.." && pwd)
extras=("$@"); [ ${#extras[@]} -gt 0 ] || extras=(docs jax llm models ray)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat > "$work/resnet.py" <<'PY'
import torch
import torchvision


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnet18()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(1, 3, 64, 64)]


def get_init_inputs():
    return []
PY
check() {  # EXTRA: the command that proves it works
    case "$1" in
        docs) python -m mkdocs --version ;;
        jax) solar analyze "$root/examples/jax/flax_mlp.py" --arch H100-SXM ;;
        llm) python -c "import openai, solar.frontends.llm.client" ;;
        models) solar analyze "$work/resnet.py" --arch H100-SXM --mode eval &&
                solar analyze "hf:$root/tests/fixtures/hf/llama2-7b.json" --scenario prefill --seq 128 --arch H100-SXM ;;
        ray) python -c "import ray, solar.kernelbench.ray_runner" ;;
        *) echo "unknown extra '$1'; known: docs jax llm models ray" >&2; return 2 ;;
    esac
}
for extra in "${extras[@]}"; do
    env="$work/$extra"
    python3 -m venv "$env"
    "$env/bin/pip" install -q -c "$root/constraints.txt" "${wheel}[$extra]"
    if (cd "$work" && PATH="$env/bin:$PATH" check "$extra" > "$work/$extra.out" 2>&1); then
        echo "extra [$extra]: installs and runs"
    else
        echo "extra [$extra]: FAILED" >&2; tail -20 "$work/$extra.out" >&2; exit 1
    fi
    rm -rf "$env"
done
