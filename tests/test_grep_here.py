"""A small range's fixed-string search runs in this process (``parallel._grep_here``) and finds what
``grep -a -b -o -F`` finds: every match, in order, with its offset and text, on generated texts and
patterns (strings that overlap, share prefixes or are each other's prefix; newlines, NUL, bytes
over 0x7F, quotes and backslashes in both). The searches a graph command makes go through it below
``_grep.HERE`` bytes and through grep above, with the same answers on every fixture.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.examples import examples

from pbtxt_scan.parallel import _grep
from pbtxt_scan.parallel._grep_here import compiled, search

GREP = shutil.which("grep")
needs_grep = pytest.mark.skipif(GREP is None, reason="compared with grep")

ALPHABET = b"ab/_\n\"'\\\x00\xe4\xb8"
texts = st.binary(max_size=300).map(lambda b: bytes(ALPHABET[c % len(ALPHABET)] for c in b))
strings = st.binary(min_size=1, max_size=6).map(lambda b: bytes(ALPHABET[c % len(ALPHABET)] for c in b)).filter(
    lambda s: b"\n" not in s and b"\x00" not in s)  # (no argument holds a NUL: grep is never given one)


def _grep_says(text: bytes, pattern: bytes, tmp: Path) -> List[Tuple[int, bytes]]:
    path = tmp / "text"
    path.write_bytes(text)
    done = subprocess.run([GREP, "-a", "-b", "-o", "-F", "-e", os.fsdecode(pattern), str(path)],
                          stdout=subprocess.PIPE, env=dict(os.environ, LC_ALL="C"))
    assert done.returncode in (0, 1)
    out = []
    for line in done.stdout.split(b"\n")[:-1]:
        off, _, hit = line.partition(b":")
        out.append((int(off), hit))
    return out


@needs_grep
@settings(max_examples=examples(2))
@given(text=texts, pattern=st.lists(strings, min_size=1, max_size=4))
@example(text=b"xabab\nab", pattern=[b"a", b"ab", b"aba"])
@example(text=b"\"\\\\\x00\xe4\xb8/", pattern=[b"\\", b"\xe4\xb8"])
def test_the_search_here_finds_what_grep_finds(tmp_path_factory: pytest.TempPathFactory, text: bytes, pattern: List[bytes]) -> None:
    joined = b"\n".join(pattern)
    rx = compiled(os.fsdecode(joined), ("-F",))
    assert rx is not None
    assert list(search(text, 0, rx)) == _grep_says(text, joined, tmp_path_factory.mktemp("g"))


@pytest.mark.parametrize("pattern, opts", [
    ("gradient|\\\\[15xuU]", ("-E",)),  # (an extended regex: grep's)
    ("a\n\nb", ("-F",)),  # (an empty string matches every line)
    ("a", ("-F", "-n")),  # (an option this search does not print)
    ("\n".join("s%d" % i for i in range(65)), ("-F",)),  # (too many strings: one DFA in grep)
])
def test_what_it_does_not_take_is_left_to_grep(pattern: str, opts: Tuple[str, ...]) -> None:
    assert compiled(pattern, opts) is None


@needs_grep
def test_a_range_is_searched_here_below_the_bound_and_by_grep_above(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pbtxt_scan import GraphFile

    path = tmp_path / "g.pbtxt"
    path.write_bytes(b"".join(b'node {\n  name: "n%d/a"\n  op: "Const"\n}\n' % i for i in range(3000)))
    pattern = "n17/a\nn1/a\nn2999"
    with GraphFile.open(str(path)) as g:
        size = g.size
        monkeypatch.setattr(_grep, "HERE", size)
        here = list(_grep._grep(GREP, g, 0, pattern, opts=("-F",)))
        started = []
        monkeypatch.setattr(_grep, "spawn", lambda *a, **k: started.append(a) or _spawn(*a, **k))
        assert list(_grep._grep_range(GREP, g, 100, size, pattern, ("-F",))) == [h for h in here if h[0] >= 100]
        assert not started
        monkeypatch.setattr(_grep, "HERE", size - 1)
        assert list(_grep._grep(GREP, g, 0, pattern, opts=("-F",))) == here
        assert started
    assert [t for _, t in here].count(b"n1/a") == 1 and len(here) == 3


_spawn = _grep.spawn


def test_grep_runs_in_the_c_locale_with_none_of_our_grep_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREP_OPTIONS", "-i")  # (an old grep reads it: matches in any case)
    monkeypatch.setenv("GREP_COLORS", "mt=01;31")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    env = _grep.c_locale()
    assert env["LC_ALL"] == "C" and env.get("PATH") == os.environ.get("PATH")
    assert not {"GREP_OPTIONS", "GREP_COLORS", "LANG"} & set(env)
