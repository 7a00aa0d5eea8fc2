"""Training steps of PyTorch programs: exact FLOPs of backward ops by structure (counted by hand
here, never taken from solar), and the IR's gradients and optimizer updates against torch.autograd
and torch.optim on random inputs at small sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solar.backends.work import graph_work
from solar.errors import UsageError
from solar.frontends.torch.train import Optimizer, lower_train, trace_train_module
from solar.ir.interp import run
from solar.ir.nodes import Role
from solar.lift import lift


def _step(model, *inputs, optimizer="none", loss="sum"):
    return lower_train(trace_train_module(model, inputs, loss, optimizer))


def _flops_writing(program, match, contractions: bool = False) -> int:
    """FLOPs of the statements whose target tensor satisfies `match` (only contractions: their
    multiply-adds, 2 FLOPs each)."""
    graph = lift(program)
    work = graph_work(graph)
    if contractions:
        return sum(work[n.id].contraction_flops for n in graph.nodes() if match(n.output))
    return sum(work[n.id].flops for n in graph.nodes() if match(n.output))


def _cone_flops(program, tensor: str, contractions: bool = False) -> int:
    """FLOPs of every statement `tensor` depends on (through temps)."""
    writers: dict[str, list] = {}
    for s in program.stmts:
        writers.setdefault(s.target.tensor, []).append(s)
    need, todo = set(), [tensor]
    while todo:
        t = todo.pop()
        if t in need:
            continue
        need.add(t)
        for s in writers.get(t, []):
            todo += [ld.tensor for ld in s.loads()]
    return _flops_writing(program, lambda out: out in need, contractions)


class _Linear(nn.Module):
    def __init__(self, n, i, o):
        super().__init__()
        self.x = nn.Parameter(torch.randn(n, i))  # a parameter, so the step computes dX too
        self.lin = nn.Linear(i, o)

    def forward(self, r):
        return self.lin(self.x)


def _weighted(y, r):  # loss = sum(y * r): dY = r, data rather than a constant
    return (y * r).sum()


def test_linear_backward_flops_exact():
    n, i, o = 6, 5, 7
    tp = lower_train(trace_train_module(_Linear(n, i, o), (torch.randn(n, o),), _weighted, "none"))
    g = {k.split("_")[-1]: tp.gradient_tensor(k) for k in tp.grads}
    # dX = dY·W and dW = dYᵀ·X: n*o*i multiply-adds each; db = column sums of dY: n*o additions.
    assert _cone_flops(tp.program, g["x"], contractions=True) == 2 * n * o * i
    assert _cone_flops(tp.program, g["weight"], contractions=True) == 2 * n * o * i
    assert _cone_flops(tp.program, g["bias"], contractions=True) == 0
    dy = _cone_flops(tp.program, g["x"]) - 2 * n * o * i  # forming dY = 1 * r, if any
    assert _cone_flops(tp.program, g["bias"]) - dy == n * o


def _valid_taps(size, kernel, stride, pad, out):
    return sum(1 for p in range(out) for k in range(kernel) if 0 <= p * stride + k - pad < size)


def test_conv2d_strided_grouped_backward_flops_exact():
    nb, cin, cout, h, w, kh, kw, stride, pad, groups = 2, 4, 8, 9, 7, 3, 2, 2, 1, 2
    ho, wo = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.x = nn.Parameter(torch.randn(nb, cin, h, w))
            self.conv = nn.Conv2d(cin, cout, (kh, kw), stride=stride, padding=pad, groups=groups)

        def forward(self, r):
            return self.conv(self.x)

    tp = lower_train(trace_train_module(M(), (torch.randn(nb, cout, ho, wo),), _weighted, "none"))
    taps = _valid_taps(h, kh, stride, pad, ho) * _valid_taps(w, kw, stride, pad, wo)
    macs = nb * cout * (cin // groups) * taps  # the forward's multiply-adds, padding excluded
    flops = lambda suffix: _flops_writing(tp.program, lambda t: t.endswith(suffix))
    assert flops("_dx") == 2 * macs  # every (output, tap) pair once, transposed
    assert flops("_dw") == 2 * macs
    assert flops("_db") == nb * cout * ho * wo


def test_causal_attention_backward_flops_exact():
    b, h, length, e = 2, 3, 6, 4

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = (nn.Parameter(torch.randn(b, h, length, e)) for _ in range(3))

        def forward(self, r):
            return F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=True)

    tp = lower_train(trace_train_module(M(), (torch.randn(b, h, length, e),), _weighted, "none"))
    pairs = b * h * length * (length + 1) // 2  # (i, j) with j <= i, per batch and head
    flops = lambda suffix: _flops_writing(tp.program, lambda t: t.endswith(suffix))
    assert flops("_dq") == 2 * pairs * e
    assert flops("_dk") == 2 * pairs * e
    assert flops("_dv") == 2 * pairs * e
    # dP = dO·Vᵀ over the pairs, then dS = scale * P * (dP - D): three ops per pair
    assert flops("_dp") == 2 * pairs * e + 3 * pairs
    assert flops("_D") == 2 * b * h * length * e
    assert (
        flops("_scores") == 2 * pairs * e
    )  # the forward's Q·Kᵀ once: P is reused, never recomputed


# ---- gradients and updates against torch ---------------------------------------------------------


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.conv = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
        self.bn = nn.BatchNorm2d(4)
        self.frozen = nn.Linear(8, 8)
        self.frozen.requires_grad_(False)

    def forward(self, x, img):
        y = self.norm(F.gelu(self.lin(self.frozen(x))))
        q = y.view(2, 3, 2, 4).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        return a.sum() * 0.5 + torch.relu(self.bn(self.conv(img))).mean()


def _run(tp, model, inputs, state):
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    feed = {}
    for t in tp.program.tensors:
        if t.role not in (Role.INPUT, Role.PARAM):
            continue
        if t.name in tp.bindings:
            kind, key = tp.bindings[t.name]
            val = inputs[key] if kind == "input" else named[key.removeprefix("model.")]
        else:
            param, what = tp.state[t.name]
            val = state[(tp.bindings[param][1].removeprefix("model."), what)]
        feed[t.name] = val.detach().numpy()
    return run(tp.program, feed)


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_gradients_and_update_match_torch(optimizer):
    torch.manual_seed(0)
    model = _Block()
    inputs = (torch.randn(2, 3, 8), torch.randn(2, 2, 5, 5))
    tp = _step(model, *inputs, optimizer=optimizer)
    assert len(tp.grads) == 8  # the frozen layer gets no gradient
    opt = Optimizer(optimizer, lr=0.1, weight_decay=0.05 if optimizer == "adamw" else 0.0)
    tp = lower_train(trace_train_module(model, inputs, "sum", opt))
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    gen = torch.Generator().manual_seed(1)
    kinds = ("momentum",) if optimizer == "sgd" else ("exp_avg", "exp_avg_sq")
    state = {
        (n, k): torch.rand(p.shape, generator=gen)
        for n, p in model.named_parameters()
        for k in kinds
    }
    outs = _run(tp, model, inputs, state)

    model.zero_grad()
    model(*inputs).backward()
    for n in names:
        ref = dict(model.named_parameters())[n].grad.numpy()
        got = tp.gradient(
            next(k for k, v in tp.bindings.items() if v == ("param", "model." + n)), outs
        )
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5, err_msg=n)
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "sgd":
        torch_opt = torch.optim.SGD(params, lr=0.1, momentum=opt.momentum)
        for n, p in zip(names, params):
            torch_opt.state[p]["momentum_buffer"] = state[(n, "momentum")].clone()
    else:
        torch_opt = torch.optim.AdamW(params, lr=0.1, weight_decay=0.05, foreach=True)
        for n, p in zip(names, params):
            torch_opt.state[p] = {
                "step": torch.tensor(0.0),
                "exp_avg": state[(n, "exp_avg")].clone(),
                "exp_avg_sq": state[(n, "exp_avg_sq")].clone(),
            }
    torch_opt.step()
    updated = {name: outs[name] for name in outs if name.endswith("_new")}
    for n, p in zip(names, params):
        pname = next(k for k, v in tp.bindings.items() if v == ("param", "model." + n))
        np.testing.assert_allclose(
            updated[pname + "_new"], p.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n
        )


class _Masked(nn.Module):
    def __init__(self, boolean: bool):
        super().__init__()
        self.q, self.k, self.v = (nn.Parameter(torch.randn(2, 2, 5, 4)) for _ in range(3))
        self.boolean = boolean

    def forward(self, mask):
        m = mask > 0 if self.boolean else mask
        return F.scaled_dot_product_attention(self.q, self.k, self.v, attn_mask=m, scale=0.6)


@pytest.mark.parametrize("boolean", [False, True])
def test_masked_attention_gradients_match_torch(boolean):
    torch.manual_seed(0)
    model = _Masked(boolean)
    mask = torch.randn(5, 5)
    mask[:, 0] = 1.0  # every query attends to at least one key
    tp = lower_train(trace_train_module(model, (mask,), _weighted_sdpa, "none"))
    outs = _run(tp, model, (mask,), {})
    _weighted_sdpa(model(mask), mask).backward()
    for p in tp.grads:
        ref = dict(model.named_parameters())[tp.bindings[p][1].removeprefix("model.")].grad.numpy()
        np.testing.assert_allclose(tp.gradient(p, outs), ref, rtol=1e-4, atol=1e-5, err_msg=p)


def _weighted_sdpa(y, mask):  # a loss whose gradient varies per element
    return (y * y).sum()


def test_unused_trainable_parameter_gets_no_gradient():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(4, 4), nn.Linear(4, 4)
            self.table = nn.Parameter(torch.randn(5))  # read only for an index: no gradient

        def forward(self, x):
            return self.used(x) + self.table.argmax()

    tt = trace_train_module(M(), (torch.randn(2, 4),), "sum", "adamw")
    assert sorted(tt.no_gradient) == ["model.table", "model.unused.bias", "model.unused.weight"]
    tp = lower_train(tt)
    assert sorted(tp.bindings[p][1] for p in tp.grads) == ["model.used.bias", "model.used.weight"]
    assert sorted(s for s, _ in tp.state.values()) == sorted(list(tp.grads) * 2)  # AdamW: m, v
    (note,) = [n for n in tp.notes(tt) if "no gradient" in n]
    assert note.startswith("3 parameter(s) get no gradient")
    assert note.endswith(", ".join(tt.no_gradient))


def test_tied_weight_is_updated_once_under_one_name():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.head = nn.Embedding(6, 4), nn.Linear(4, 6, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, ids):
            return self.head(self.embed(ids))

    tt = trace_train_module(M(), (torch.tensor([[1, 2, 5]]),), "sum", "adamw")
    tp = lower_train(tt)
    (kept,) = [tp.bindings[p][1] for p in tp.grads]
    (other,) = {"model.embed.weight", "model.head.weight"} - {kept}
    assert tt.no_gradient == (f"{other} (tied to {kept})",)


def test_unknown_loss_and_optimizer():
    with pytest.raises(UsageError, match="unknown loss"):
        _step(nn.Linear(2, 2), torch.randn(1, 2), loss="max")
    with pytest.raises(UsageError, match="unknown optimizer"):
        _step(nn.Linear(2, 2), torch.randn(1, 2), optimizer="lamb")


def test_saved_activations_of_an_mlp():
    n, i, h, o = 4, 3, 5, 2
    model = nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))
    tp = _step(model, torch.randn(n, i))
    # The backward reads one activation: the ReLU's output (its mask, and the input of the second
    # layer's dW); the batch and the weights are inputs, not activations.
    assert tp.saved_bytes == n * h * 4


def test_embedding_backward_matches_torch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(7, 3), nn.Linear(3, 2))
    ids = torch.tensor([[1, 4, 1], [6, 0, 4]])  # repeated ids: their gradients add up
    tp = _step(model, ids)
    outs = _run(tp, model, (ids,), {})
    model(ids).sum().backward()
    param = next(k for k, v in tp.bindings.items() if v == ("param", "model.0.weight"))
    np.testing.assert_allclose(
        tp.gradient(param, outs), model[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6
    )


def test_api_and_cli_train(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    import solar

    path = tmp_path / "tiny.py"
    path.write_text(
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lin = nn.Linear(4, 3)\n\n    def forward(self, x):\n"
        "        return self.lin(x)\n\ndef get_inputs():\n    return [torch.randn(2, 4)]\n"
    )
    fwd = solar.analyze(str(path), arch="H100-SXM")
    step = solar.analyze(str(path), arch="H100-SXM", train=True, optimizer="sgd")
    assert step.totals.flops > fwd.totals.flops
    assert any("SGD" in line for line in step.assumptions)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(path), "--train", "--json"],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert any("AdamW" in line for line in json.loads(proc.stdout)["assumptions"])
    proc = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(path), "--train", "--loss", "max"],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert proc.returncode == 2 and "unknown loss" in proc.stderr


def test_conv_transpose2d_backward_flops_exact():
    nb, cin, cout, h, w, k, stride, pad, out_pad, groups = 2, 4, 6, 5, 4, 3, 2, 1, 1, 2
    ho = (h - 1) * stride - 2 * pad + (k - 1) + out_pad + 1
    wo = (w - 1) * stride - 2 * pad + (k - 1) + out_pad + 1

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.x = nn.Parameter(torch.randn(nb, cin, h, w))
            self.conv = nn.ConvTranspose2d(cin, cout, k, stride, pad, out_pad, groups=groups)

        def forward(self, r):
            return self.conv(self.x)

    tp = lower_train(trace_train_module(M(), (torch.randn(nb, cout, ho, wo),), _weighted, "none"))
    # (input position, tap) pairs landing inside the (padding-cropped) output
    taps = sum(1 for i in range(h) for t in range(k) if 0 <= i * stride + t - pad < ho) * sum(
        1 for i in range(w) for t in range(k) if 0 <= i * stride + t - pad < wo
    )
    macs = nb * cin * (cout // groups) * taps
    flops = lambda suffix: _flops_writing(tp.program, lambda t: t.endswith(suffix))
    assert flops("_dx") == 2 * macs
    assert flops("_dw") == 2 * macs
    assert flops("_db") == nb * cout * ho * wo


def test_grouped_query_attention_gradients_match_torch():
    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Parameter(torch.randn(1, 4, 6, 8))
            self.k, self.v = (nn.Parameter(torch.randn(1, 2, 6, 8)) for _ in range(2))

        def forward(self, x):
            return F.scaled_dot_product_attention(
                self.q, self.k, self.v, is_causal=True, enable_gqa=True
            )

    torch.manual_seed(0)
    model, x = G(), torch.randn(1)
    tp = lower_train(trace_train_module(model, (x,), _weighted_sdpa, "none"))
    outs = _run(tp, model, (x,), {})
    _weighted_sdpa(model(x), x).backward()
    for p in tp.grads:
        ref = dict(model.named_parameters())[tp.bindings[p][1].removeprefix("model.")].grad.numpy()
        np.testing.assert_allclose(tp.gradient(p, outs), ref, rtol=1e-4, atol=1e-5, err_msg=p)
