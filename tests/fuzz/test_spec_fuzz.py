"""Property tests of the spec loader (hypothesis): a spec YAML with any one value, key or byte changed
either loads (and then every number is finite and in its physical range) or raises a SpecError of
one line naming the file — never another exception."""

from __future__ import annotations

import math

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar.errors import SpecError
from solar.hardware.spec import SPEC_DIR, HardwareSpec, load_spec_file, physical_problem

BASE = yaml.safe_load((SPEC_DIR / "H100-SXM.yaml").read_text())
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(tree, prefix=()):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))


PATHS = sorted(_paths(BASE), key=str)


def _load(tmp_path, text: str) -> HardwareSpec | None:
    path = tmp_path / "H100-SXM.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        spec = load_spec_file(path)
    except SpecError as exc:
        message = str(exc)
        assert "\n" not in message and "H100-SXM.yaml" in message, message
        return None
    assert physical_problem(spec) is None
    return spec


def _edit(tree, path, how, value):
    tree = yaml.safe_load(yaml.safe_dump(tree))
    node = tree
    for k in path[:-1]:
        node = node[k]
    if how == "set":
        node[path[-1]] = value
    elif how == "delete":
        del node[path[-1]]
    else:
        node[f"{path[-1]}_extra"] = value
    return tree


@SETTINGS
@given(st.sampled_from(PATHS), st.sampled_from(["set", "delete", "add"]), values)
def test_one_edited_value_loads_or_fails_in_one_line(tmp_path, path, how, value):
    spec = _load(tmp_path, yaml.safe_dump(_edit(BASE, path, how, value), allow_unicode=True))
    if spec is not None and how == "set" and path[-1] == "value":
        assert isinstance(value, (int, float)) and math.isfinite(value)


@SETTINGS
@given(
    st.randoms(use_true_random=False),
    st.sampled_from(
        [
            "\x00",
            "\xff",
            ":",
            "- ",
            "&a ",
            "*a",
            "!!",
            "\t",
            "{",
            "[",
            "'",
            '"',
            "\n  ",
            "dram:\n",
            "#",
        ]
    ),
)
def test_edited_bytes_load_or_fail_in_one_line(tmp_path, rnd, token):
    text = (SPEC_DIR / "H100-SXM.yaml").read_text()
    for _ in range(rnd.randint(1, 3)):
        a = rnd.randrange(len(text) + 1)
        text = text[:a] + token + text[a + rnd.randint(0, 3) :]
    _load(tmp_path, text)


@SETTINGS
@given(st.sampled_from(PATHS))
def test_a_repeated_key_is_an_error_naming_it(tmp_path, path):
    lines = yaml.safe_dump(BASE, sort_keys=False).split("\n")
    depth = len(path) - 1
    key = path[-1]
    indent = "  " * depth
    i = next((k for k, line in enumerate(lines) if line.startswith(f"{indent}{key}:")), None)
    if i is None:  # under a list, or dumped inline
        return
    end = i + 1
    while end < len(lines) and lines[end].startswith(indent + "  "):
        end += 1
    text = "\n".join(lines[:end] + lines[i:end] + lines[end:])
    path_file = tmp_path / "H100-SXM.yaml"
    path_file.write_text(text)
    try:
        load_spec_file(path_file)
    except SpecError as exc:
        assert f"duplicate key {key!r}" in str(exc), str(exc)
    else:
        raise AssertionError(f"a repeated {key!r} loaded")
