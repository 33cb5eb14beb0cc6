"""Guidelines in Markdown, rendered safely: everything is escaped first, then a tiny subset is formatted.

The subset: ``#``-``###`` headings, paragraphs, ``-``/``*`` list items, ``**bold**``, ``*italic*``,
```code```. No links, images or raw HTML: whatever else the text holds is shown as text.
"""

from __future__ import annotations

import html
import re

from markupsafe import Markup

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])")
_CODE = re.compile(r"`([^`]+)`")
_HEADING = re.compile(r"^(#{1,3})\s+(.*)$")
_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")


def _inline(escaped: str) -> str:
    text = _CODE.sub(r"<code>\1</code>", escaped)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    return _ITALIC.sub(r"<em>\1</em>", text)


def render(markdown: str) -> Markup:
    """HTML of the guidelines (safe to put in a page as is).

    Examples
    --------
    >>> print(render("# Rules\\nBe **kind** <script>x</script>\\n- one\\n- two"))
    <h2>Rules</h2>
    <p>Be <strong>kind</strong> &lt;script&gt;x&lt;/script&gt;</p>
    <ul><li>one</li><li>two</li></ul>
    """
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            out.append("<p>" + " ".join(para) + "</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
            items.clear()

    for raw in str(markdown).splitlines():
        line = _inline(html.escape(raw.rstrip(), quote=True))
        if not raw.strip():
            flush()
        elif m := _HEADING.match(line):
            flush()
            level = min(len(m.group(1)) + 1, 4)
            out.append(f"<h{level}>{m.group(2)}</h{level}>")
        elif m := _ITEM.match(raw):
            if para:
                flush()
            items.append(_inline(html.escape(m.group(1).strip(), quote=True)))
        else:
            if items:
                flush()
            para.append(line.strip())
    flush()
    return Markup("\n".join(out))


def split_title(markdown: str) -> tuple[str | None, str]:
    r"""The guidelines' own title (a ``# `` heading on their first line) and the rest: the annotate page shows
    the title as the guidelines' summary instead of "Guidelines" above the same heading.

    >>> split_title("# How to judge\n\nBe fair")
    ('How to judge', '\nBe fair')
    >>> split_title("Be fair\n# Later")
    (None, 'Be fair\n# Later')
    """
    text = str(markdown or "")
    lines = text.lstrip("\n").split("\n")
    m = re.match(r"^#\s+(.*\S)\s*$", lines[0]) if lines else None
    if m is None:
        return None, text
    return m.group(1), "\n".join(lines[1:])
