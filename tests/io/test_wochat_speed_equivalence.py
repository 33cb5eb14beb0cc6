"""The WOCHAT reader's fast path: a file without a DOCTYPE is parsed by ElementTree's C parser, one with a
DOCTYPE by the defusedxml parser. Both must give the same tree, the same errors and the same corpus; every
DOCTYPE (whatever precedes it) still goes to the parser that refuses entities and internal subsets; the cycle
collector, paused while a file is read, is back as it was."""

from __future__ import annotations

import gc
import pyexpat
import xml.etree.ElementTree as ET

import pytest

from dialeval import DialevalError
from dialeval.io.wochat import _DECLARATION, _Parser, parse_xml, read_wochat
from dialeval.io.wochat_writer import write_wochat

DECL = '<?xml version="1.0" encoding="UTF-8"?>'
BODY = """
<!-- a comment with <b> in it -->
<dialogue id="IRIS00001">
  <system_name>IRIS</system_name><user_name>Ann</user_name><timestamp> 2017 </timestamp>
  <x:meta xmlns:x="urn:x" x:a="1" b="2">v<y>w</y></x:meta>
  <turn id="1"><speaker>USER</speaker><utterance>hello SYSTEM_NAME &amp; &#233; <![CDATA[<b>]]></utterance>
    <context xml:space="preserve">  kept  </context></turn>
  <turn id="2"><speaker>SYSTEM</speaker><utterance xml:space="preserve">
 hi USER_NAME </utterance><?pi data?>
    <annotator id="a1"></VALID></POSITIVE><ungrammatical-sentence/><comment> c </comment></annotator>
    <annotator id="a2"><INVALID/><comment xml:space="preserve" k="v"> d </comment><c2 xml:space="default"> e </c2>
    </annotator>
    <annotator id="a3"><ACCEPTABLE> </ACCEPTABLE><ctx a="1"><b>x</b>tail</ctx></annotator>
  </turn>
</dialogue>
"""


def test_expat_limits_amplification_too():
    """Not relied on (a DOCTYPE never reaches the C parser), but the expat in use has its own limit."""
    major, minor, micro = pyexpat.version_info
    assert (major, minor, micro) >= (2, 4, 1), pyexpat.EXPAT_VERSION


@pytest.mark.parametrize("text", [
    "<a/>", "<a b='1' c=\"2\">t<b>u</b>v<!-- c --><?p q?></a>", '<a xmlns="urn:a"><b xml:space="preserve"> </b></a>',
    "<a><![CDATA[<b> & ]]></a>", "<a>&lt;&#x1F600;</a>"])
def test_c_and_defused_parsers_build_the_same_tree(text):
    assert _DECLARATION.search(text) is None
    fast, safe = ET.XMLParser(target=ET.TreeBuilder()), _Parser()
    fast.feed(text)
    safe.feed(text)
    a, b = fast.close(), safe.close()
    assert ET.tostring(a) == ET.tostring(b)
    parts = [[(e.tag, e.attrib, e.text, e.tail) for e in root.iter()] for root in (a, b)]
    assert parts[0] == parts[1]


@pytest.mark.parametrize("text", [
    "", "  ", "text", "<a>", "<a></b>", "<a/><b/>", "<a>&foo;</a>", "<a b='&foo;'/>", "<a b='1' b='2'/>",
    "<x:a/>", "<a>&#0;</a>", "<a>\x01</a>", "<a><!foo></a>", "<a><!ENTITY x 'y'></a>", "<!doctype a><a/>"])
def test_c_and_defused_parsers_give_the_same_error(text):
    """Errors are expat's in both (the fast path is taken only without a DOCTYPE; these texts are refused by
    both alike, with or without the fast path)."""
    messages = []
    for parser in (ET.XMLParser(target=ET.TreeBuilder()), _Parser()):
        with pytest.raises(ET.ParseError) as e:
            parser.feed(text)
            parser.close()
        messages.append((str(e.value), e.value.code, e.value.position))
    assert messages[0] == messages[1]
    with pytest.raises(DialevalError, match=r"^x\.xml: not well-formed XML at line"):
        parse_xml(text, "x.xml")


@pytest.mark.parametrize("doctype, message", [
    ('<!DOCTYPE d [<!ENTITY a "b">]>', "refused unsafe XML (EntitiesForbidden"),
    ('<!DOCTYPE d [<!ENTITY a SYSTEM "file:///etc/passwd">]>', "refused unsafe XML (EntitiesForbidden"),
    ('<!DOCTYPE d [<!ATTLIST annotator id CDATA "ghost">]>', "a DOCTYPE with declarations"),
    ('<!DOCTYPE d []>', "a DOCTYPE with declarations")])
@pytest.mark.parametrize("before", ["", "\n<!-- x -->\n", "<?pi x?>", "<!-- <![CDATA[ -->"])
def test_every_doctype_still_goes_to_the_refusing_parser(tmp_path, doctype, message, before):
    p = tmp_path / "d.xml"
    p.write_text(DECL + before + doctype + BODY.replace("<!-- a comment with <b> in it -->", ""))
    with pytest.raises(DialevalError) as e:
        read_wochat(p)
    assert message in str(e.value)


def test_billion_laughs_in_utf16_is_refused(tmp_path):
    laughs = ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
              '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><d>&c;</d>')
    p = tmp_path / "d.xml"
    p.write_bytes(laughs.encode("utf-16"))
    with pytest.raises(DialevalError, match="billion laughs"):
        read_wochat(p)


@pytest.mark.parametrize("names", ["error", "replace", "keep"])
def test_same_corpus_through_either_parser(tmp_path, names):
    """The same file read once by the C parser and once, with a bare DOCTYPE (on the declaration's line, so the
    line numbers in the notices agree), by the defusedxml parser."""
    fast, safe = tmp_path / "fast", tmp_path / "safe"
    fast.mkdir()
    safe.mkdir()
    (fast / "d.xml").write_text(DECL + BODY)
    (safe / "d.xml").write_text(DECL + "<!DOCTYPE dialogue>" + BODY)
    assert _DECLARATION.search(BODY) is None
    a, b = read_wochat(fast, names=names), read_wochat(safe, names=names)
    assert a.dialogues == b.dialogues and a.scales == b.scales
    notices = [[n.replace(str(folder), "") for n in c.meta["notices"]] for folder, c in ((fast, a), (safe, b))]
    assert notices[0] == notices[1] and len(notices[0]) == 2
    t = a.dialogues[0].turns[1]
    assert t.labels == {"validity": ["VALID", "INVALID", "ACCEPTABLE"], "positive": ["yes", "no", "no"]}
    assert t.meta["annotator_tags"] == [
        [{"tag": "ungrammatical-sentence", "attrib": {}, "text": ""}, {"tag": "comment", "attrib": {}, "text": "c"}],
        [{"tag": "comment", "attrib": {"k": "v"}, "text": " d "}, {"tag": "c2", "attrib": {}, "text": "e"}],
        [{"tag": "ctx", "attrib": {"a": "1"}, "text": "", "xml": '<ctx a="1"><b>x</b>tail</ctx>'}]]
    assert "_optional" not in t.meta
    assert a.dialogues[0].meta["tags"][0]["tag"] == "{urn:x}meta"


def test_a_doctype_inside_a_comment_or_cdata_takes_the_refusing_parser_too():
    """The test for a DOCTYPE is a plain search: a ``<!`` inside a comment or CDATA section sends the text to
    the slower parser, never the other way round."""
    assert _DECLARATION.search("<a><![CDATA[<!DOCTYPE x>]]></a>") and _DECLARATION.search("<!-- <!ENTITY --><a/>")
    assert _DECLARATION.search("<!-- x --><a><![CDATA[y]]></a>") is None


def test_writer_output_takes_the_fast_path(tmp_path):
    p = tmp_path / "d.xml"
    p.write_text(DECL + BODY)
    write_wochat(read_wochat(p), tmp_path / "w.xml")
    assert _DECLARATION.search((tmp_path / "w.xml").read_text()) is None


@pytest.mark.parametrize("enabled", [True, False])
def test_cycle_collector_back_as_it_was(tmp_path, enabled):
    good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
    good.write_text(DECL + BODY)
    bad.write_text(DECL + "<dialogue id='IRIS00001'><turn")
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        read_wochat(good)
        assert gc.isenabled() is enabled
        with pytest.raises(DialevalError):
            read_wochat(bad)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
