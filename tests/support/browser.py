"""Headless Chromium for the report's browser test: render a page (its DOM after the inline script
ran, and a screenshot), and read a PNG without any image library (zlib and the PNG filters)."""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

WINDOW = (1280, 900)
NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium() -> Optional[str]:
    for n in NAMES:
        p = shutil.which(n)
        if p:
            return p
    return None


def _run(page: Path, *args: str, tmp: Path) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    exe = chromium()
    assert exe, "no chromium"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--disable-extensions", "--user-data-dir=%s" % (tmp / "profile"),
           "--window-size=%d,%d" % WINDOW, *args, page.resolve().as_uri()]
    env = dict(os.environ, HOME=str(tmp))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


def dump_dom(page: Path, tmp: Path) -> str:
    r = _run(page, "--dump-dom", tmp=tmp)
    assert r.returncode == 0 and "<html" in r.stdout, r.stderr[-2000:]
    return r.stdout


def screenshot(page: Path, png: Path, tmp: Path) -> bytes:
    r = _run(page, "--screenshot=%s" % png, tmp=tmp)
    assert r.returncode == 0 and png.exists(), r.stderr[-2000:]
    return png.read_bytes()


def png_size_and_colours(data: bytes, limit: int = 4096) -> Tuple[Tuple[int, int], int]:
    """(width, height) and the number of distinct pixel colours (counted up to ``limit``) of an
    8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    h = ctype = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours: Set[bytes] = set()
    i = 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if len(colours) < limit:
            colours.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp * 7))
        prev = line
    return (w, h), min(len(colours), limit)


class Drawn:
    """One ``<svg class="hood">`` read back from a page: its attributes, nodes and edges."""

    def __init__(self, attrs: Dict[str, str]) -> None:
        self.attrs = attrs
        self.nodes: Dict[str, Dict[str, str]] = {}  # name -> the g's attributes, plus "title"
        self.edges: Set[Tuple[str, str, bool]] = set()


class PageReader(HTMLParser):
    """The drawings of a report page, every URL it references, and its script elements."""

    URL_ATTRS = ("href", "src", "xlink:href", "action", "formaction", "poster", "data", "srcset", "background")
    # the attributes whose value may hold CSS url(...) (other attributes hold a graph's names as text)
    CSS_ATTRS = ("style", "fill", "stroke", "marker-start", "marker-mid", "marker-end", "clip-path", "mask", "filter", "cursor")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.drawings: List[Drawn] = []
        self.urls: List[str] = []
        self.scripts = 0
        self.tags: Set[str] = set()
        self._title: Optional[Dict[str, str]] = None
        self._text: List[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        for k, v in a.items():
            if k in self.URL_ATTRS:
                self.urls.append(v)
            if k in self.CSS_ATTRS:
                self.urls += re.findall(r"url\(\s*['\"]?([^'\")]*)", v)
        if tag == "script":
            self.scripts += 1
        if tag == "style":
            self._in_style = True
        if tag == "svg" and "hood" in a.get("class", ""):
            self.drawings.append(Drawn(a))
        elif tag == "g" and "node" in a.get("class", "").split() and self.drawings:
            self.drawings[-1].nodes[a["data-name"]] = a
            self._title = a
        elif tag == "path" and "edge" in a.get("class", "").split() and self.drawings:
            self.drawings[-1].edges.add((a["data-src"], a["data-dst"], a.get("data-control") == "1"))
        elif tag == "title" and self._title is not None:
            self._text = []

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        if self._in_style:
            self.urls += re.findall(r"url\(\s*['\"]?([^'\")]*)", data)
            self.urls += re.findall(r"@import\s+['\"]?([^'\";]*)", data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._title is not None:
            self._title["title"] = "".join(self._text)
            self._title = None
        if tag == "style":
            self._in_style = False


def read_page(html: str) -> PageReader:
    r = PageReader()
    r.feed(html)
    r.close()
    return r


def foreign_urls(urls: List[str]) -> List[str]:
    """The URLs that are not ``#...``, ``data:`` or ``file:``."""
    return [u for u in urls if not u.strip().lower().startswith(("#", "data:", "file:"))]
