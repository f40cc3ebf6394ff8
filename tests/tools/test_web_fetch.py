"""web_fetch against real local HTTP servers: extraction, limits, content types, SSRF."""

from __future__ import annotations

import asyncio
import json
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from local2.config._schema import WebFetchSettings, WebSearchSettings
from local2.errors import ToolError
from local2.tools._base import ToolContext
from local2.tools._search import WebSearch
from local2.tools._web_fetch import WebFetch
from local2_testkit.results import extracted_text
from local2_testkit.web_server import redirect, send
from tests.tools.helpers import text_of

PAGES = Path(__file__).parents[1] / "fixtures" / "pages"


def fetcher(**cfg: object) -> WebFetch:
    cfg.setdefault("allow_hosts", ["127.0.0.1"])
    cfg.setdefault("timeout_s", 5.0)
    return WebFetch(WebFetchSettings(**cfg))


# --- extraction -------------------------------------------------------------------------

ARTICLES = {
    "news_article.html": ["glacier lake behind it starts to drain", "evacuation drill in October"],
    "blog_post.html": ["counterweight mechanism that had rusted solid", "birch plywood"],
    "docs_page.html": ["up to 600 requests per minute", "exponential backoff"],
}
BOILERPLATE = [
    "COOKIE-SENTINEL",
    "NAV-SENTINEL",
    "RELATED-SENTINEL",
    "COMMENT-SENTINEL",
    "FOOTER-SENTINEL",
    "NEWSLETTER-SENTINEL",
    "FEEDBACK-SENTINEL",
    "analytics",
]


@pytest.mark.parametrize("page", sorted(ARTICLES))
def test_fetch_keeps_main_text_and_drops_boilerplate(serve, page: str) -> None:
    server = serve({"/a": send((PAGES / page).read_bytes())})
    result = fetcher(max_chars=20_000)({"url": server.url("/a")})
    assert result.text.startswith(f"URL: {server.url('/a')}\nExtracted text:\n")
    body = text_of(result.text)
    for phrase in ARTICLES[page]:
        assert phrase in body
    for junk in BOILERPLATE:
        assert junk not in body, junk
    assert server.seen[0][1]["User-Agent"].startswith("LoCAL2/")


def long_page(fact_at: int, count: int = 40) -> list[str]:
    """``count`` paragraphs about a harbour; the one at ``fact_at`` names the keeper's cat."""
    paragraphs = [
        f"Paragraph {i}: the harbour wall was repaired again in season {i}, and the fishing "
        f"boats waited in the outer basin while the masons worked on the stones. " * 2
        for i in range(count)
    ]
    paragraphs[fact_at] = (
        "The lighthouse keeper kept a ginger cat called Biscuit, who slept on the lamp gallery."
    )
    return paragraphs


def test_long_page_shows_the_passages_relevant_to_the_question(serve) -> None:
    paragraphs = long_page(fact_at=31)
    server = serve({"/t": send("\n".join(paragraphs).encode(), "text/plain")})
    ctx = ToolContext("s1", "q1", query="What was the name of the lighthouse keeper's cat?")
    result = fetcher(max_chars=2000)({"url": server.url("/t")}, ctx)
    body = text_of(result.text)
    assert len(body) <= 2000
    assert "cat called Biscuit" in body
    kept = [p for p in paragraphs if p.strip() in body]
    assert 1 < len(kept) < len(paragraphs)
    assert [paragraphs.index(p) for p in kept] == sorted(paragraphs.index(p) for p in kept)
    assert "[…]" in body
    assert body.rstrip().endswith(
        "To read other parts, call web_fetch again with a `query` naming what you are looking for.]"
    )
    assert "chosen for relevance to the question" in body
    data = result.data
    assert data["truncated_chars"] is True
    assert data["passages_shown"] < data["passages_total"]
    assert data["chars_shown"] < data["chars"] == len("\n".join(paragraphs).strip())


def test_the_models_query_argument_focuses_the_page_too(serve) -> None:
    paragraphs = long_page(fact_at=35)
    server = serve({"/t": send("\n".join(paragraphs).encode(), "text/plain")})
    args = {"url": server.url("/t"), "query": "lighthouse cat name"}
    body = text_of(fetcher(max_chars=2000)(args).text)
    assert "cat called Biscuit" in body


def test_without_a_question_the_page_is_shown_from_the_top(serve) -> None:
    paragraphs = long_page(fact_at=35)
    server = serve({"/t": send("\n".join(paragraphs).encode(), "text/plain")})
    body = text_of(fetcher(max_chars=2000)({"url": server.url("/t")}).text)
    assert body.startswith(paragraphs[0].strip())
    assert "Biscuit" not in body
    assert "from the top (nothing on the page matched the question's words)" in body


def test_page_budget_follows_the_models_context(serve) -> None:
    paragraphs = long_page(fact_at=5, count=300)
    server = serve({"/t": send("\n".join(paragraphs).encode(), "text/plain")})
    cfg = WebFetchSettings(allow_hosts=["127.0.0.1"], timeout_s=5)
    small = WebFetch(cfg, num_ctx=8000)({"url": server.url("/t")})
    large = WebFetch(cfg, num_ctx=64000)({"url": server.url("/t")})
    assert len(text_of(small.text)) <= 8000 * cfg.context_share * 3
    assert len(text_of(small.text)) < len(text_of(large.text)) <= 64000 * cfg.context_share * 3


def test_short_text_is_not_truncated(serve) -> None:
    server = serve({"/t": send(b"just a short note", "text/plain")})
    result = fetcher()({"url": server.url("/t")})
    assert text_of(result.text) == "just a short note"
    assert result.data["truncated_chars"] is False


def test_control_characters_are_stripped(serve) -> None:
    raw = "clean\x00 text\x1b[31m here\u202e and\u200b more\r\nline two".encode()
    server = serve({"/t": send(raw, "text/plain; charset=utf-8")})
    body = text_of(fetcher()({"url": server.url("/t")}).text)
    assert body == "clean text[31m here and more\nline two"


# --- content types and charsets ----------------------------------------------------------


def test_plain_text_and_json_pass_through(serve) -> None:
    doc = {"name": "orbit", "limits": {"per_minute": 600}}
    server = serve(
        {
            "/txt": send(b"Line one.\nLine two.", "text/plain"),
            "/json": send(json.dumps(doc).encode(), "application/json"),
            "/ld": send(b'{"@type": "Article"}', "application/ld+json"),
        }
    )
    f = fetcher()
    assert text_of(f({"url": server.url("/txt")}).text) == "Line one.\nLine two."
    assert json.loads(text_of(f({"url": server.url("/json")}).text)) == doc
    assert "Article" in text_of(f({"url": server.url("/ld")}).text)


def test_broken_pdfs_and_binary_are_refused_clearly(serve) -> None:
    """(Readable PDFs and office files: tests/tools/test_web_fetch_documents.py.)"""
    server = serve(
        {
            "/pdf": send(b"%PDF-1.7\n%binary", "application/pdf"),
            "/bin": send(bytes(range(256)) * 10, "application/octet-stream"),
            "/png": send(b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
            "/lying-pdf": send(b"%PDF-1.4 not html", "text/html"),
            "/untyped": send(b"\x00\x01\x02binary", ""),
        }
    )
    f = fetcher()
    for path in ("/pdf", "/lying-pdf"):  # read as the PDFs their bytes say they are
        with pytest.raises(ToolError, match=r"^fetch error: The file is not a readable PDF"):
            f({"url": server.url(path)})
    for path, media in (("/bin", "application/octet-stream"), ("/png", "image/png")):
        with pytest.raises(ToolError, match=rf"^fetch error: unsupported content type {media}"):
            f({"url": server.url(path)})
    with pytest.raises(ToolError, match=r"^fetch error: unsupported content type"):
        f({"url": server.url("/untyped")})


FRENCH = "<p>Le marché rouvre après deux années de travaux, à la grande joie des élèves.</p>"


@pytest.mark.parametrize(
    ("ctype", "meta"),
    [
        ("text/html; charset=iso-8859-1", ""),
        ("text/html", '<meta charset="iso-8859-1">'),
        ("text/html", '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'),
    ],
)
def test_charset_from_header_or_meta(serve, ctype: str, meta: str) -> None:
    page = f"<html><head>{meta}<title>t</title></head><body>{FRENCH * 3}</body></html>"
    server = serve({"/fr": send(page.encode("latin-1"), ctype)})
    body = text_of(fetcher()({"url": server.url("/fr")}).text)
    assert "Le marché rouvre après deux années" in body
    assert "\ufffd" not in body


def test_charset_detected_without_any_declaration(serve) -> None:
    text = "Der Bürgermeister eröffnete die Brücke über die Straße am Flußufer. " * 20
    server = serve({"/de": send(text.encode("cp1252"), "text/plain")})
    body = text_of(fetcher()({"url": server.url("/de")}).text)
    assert "Bürgermeister eröffnete die Brücke" in body


# --- status codes, redirects, limits -----------------------------------------------------


@pytest.mark.parametrize("status", [404, 500, 403])
def test_http_failure(serve, status: int) -> None:
    server = serve({"/x": send(b"nope", "text/plain", status=status)})
    with pytest.raises(ToolError, match=rf"^fetch failed: {status}$"):
        fetcher()({"url": server.url("/x")})


def test_missing_url() -> None:
    for args in ({}, {"url": ""}, {"url": "   "}, {"url": None}):
        with pytest.raises(ToolError, match=r"^missing url argument$"):
            fetcher()(args)


def test_follows_redirects_and_reports_final_url(serve) -> None:
    server = serve({})
    server.routes.update(
        {
            "/r1": redirect("/r2", 301),
            "/r2": redirect(server.url("/final"), 307),
            "/final": send(b"arrived safely", "text/plain"),
        }
    )
    result = fetcher()({"url": server.url("/r1")})
    assert result.text == f"URL: {server.url('/final')}\nExtracted text:\narrived safely"
    assert result.data["redirects"] == [server.url("/r2"), server.url("/final")]


def test_too_many_redirects(serve) -> None:
    server = serve({f"/r{i}": redirect(f"/r{i + 1}") for i in range(10)})
    with pytest.raises(ToolError, match=r"^fetch error: too many redirects \(more than 3\)"):
        fetcher(max_redirects=3)({"url": server.url("/r0")})
    assert server.paths() == ["/r0", "/r1", "/r2", "/r3"]


def test_redirect_to_other_scheme_refused(serve) -> None:
    server = serve({"/r": redirect("file:///etc/passwd")})
    with pytest.raises(ToolError, match=r"^fetch error: only http:// and https://"):
        fetcher()({"url": server.url("/r")})


def test_huge_body_is_stopped_at_the_cap(serve) -> None:
    total = 20_000_000
    cap = 2_000_000

    def huge(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(total))
        h.end_headers()
        chunk = b"All work and no play makes a big page.\n" * 1600
        sent = 0
        try:
            while sent < total:
                h.wfile.write(chunk)
                sent += len(chunk)
            server.state["completed"] = True
        finally:
            server.state["sent"] = sent

    server = serve({"/huge": huge})
    start = time.monotonic()
    result = fetcher(max_bytes=cap, timeout_s=20)({"url": server.url("/huge")})
    assert time.monotonic() - start < 10
    assert result.data["bytes"] == cap
    assert result.data["truncated_bytes"] is True
    deadline = time.monotonic() + 10
    while "sent" not in server.state and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "completed" not in server.state, "the client read the whole 20 MB"
    assert int(server.state["sent"]) < total


def test_trickling_server_hits_the_total_deadline(serve) -> None:
    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        h.wfile.write(b"<html><body><p>")
        for _ in range(150):  # one byte every 0.1 s: each read is quick, the whole is not
            h.wfile.write(b"x")
            h.wfile.flush()
            time.sleep(0.1)

    server = serve({"/slow": trickle})
    url = server.url("/slow")
    start = time.monotonic()
    with pytest.raises(ToolError) as err:
        fetcher(timeout_s=1.0)({"url": url})
    assert str(err.value) == f"fetch timeout after 1s: {url}"
    assert time.monotonic() - start < 2.5


def test_server_that_never_answers_times_out(serve) -> None:
    server = serve({"/hang": lambda h: time.sleep(5)})
    url = server.url("/hang")
    start = time.monotonic()
    with pytest.raises(ToolError, match=r"^fetch timeout after 0.5s: "):
        fetcher(timeout_s=0.5)({"url": url})
    assert time.monotonic() - start < 2


def test_works_when_called_inside_a_running_event_loop(serve) -> None:
    server = serve({"/t": send(b"from a loop", "text/plain")})
    f = fetcher()

    async def inside() -> str:
        return f({"url": server.url("/t")}).text

    assert asyncio.run(inside()).endswith("from a loop")


# --- SSRF guard in the fetch path -------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]"],
)
def test_loopback_refused_without_allow_list_in_any_spelling(serve, host: str) -> None:
    server = serve({"/secret": send(b"internal data", "text/plain")})
    url = f"http://{host}:{server.port}/secret"
    with pytest.raises(ToolError, match=r"^fetch error: refused .*loopback address"):
        WebFetch(WebFetchSettings())({"url": url})
    assert server.seen == []


def test_redirect_from_allowed_alias_to_loopback_is_refused(serve) -> None:
    """``localhost`` is trusted; its redirect to 127.0.0.1 (not trusted) must be refused."""
    server = serve({"/secret": send(b"internal data", "text/plain")})
    server.routes["/go"] = redirect(server.url("/secret"))
    f = WebFetch(WebFetchSettings(allow_hosts=["localhost"]))
    with pytest.raises(ToolError, match=r"^fetch error: refused loopback address 127.0.0.1"):
        f({"url": server.url("/go", host="localhost")})
    assert server.paths() == ["/go"]


def test_redirect_to_metadata_address_is_refused(serve) -> None:
    server = serve({"/go": redirect("http://169.254.169.254/latest/meta-data/")})
    with pytest.raises(ToolError, match=r"^fetch error: refused cloud metadata address"):
        fetcher()({"url": server.url("/go")})


def test_port_specific_allow_rule(serve) -> None:
    server = serve({"/t": send(b"ok", "text/plain")})
    other = serve({"/t": send(b"ok", "text/plain")})
    f = WebFetch(WebFetchSettings(allow_hosts=[f"127.0.0.1:{server.port}"]))
    assert text_of(f({"url": server.url("/t")}).text) == "ok"
    with pytest.raises(ToolError, match=r"^fetch error: refused loopback"):
        f({"url": other.url("/t")})
    assert other.seen == []


def test_connects_to_the_vetted_address_not_a_second_lookup(serve) -> None:
    """DNS-rebinding: the name is resolved once per hop and that address is used."""
    server = serve({"/t": send(b"pinned", "text/plain")})
    answers = iter([["127.0.0.1"], ["10.9.9.9"], ["10.9.9.9"]])
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    f = WebFetch(WebFetchSettings(allow_hosts=["pinned.test"], timeout_s=5), resolver=resolver)
    result = f({"url": f"http://pinned.test:{server.port}/t"})
    assert text_of(result.text) == "pinned"
    assert calls == ["pinned.test"]
    assert server.seen[0][1]["Host"] == f"pinned.test:{server.port}"


def test_name_resolving_to_private_address_is_refused(serve) -> None:
    f = WebFetch(WebFetchSettings(), resolver=lambda host, port: ["93.184.216.34", "10.0.0.7"])
    with pytest.raises(ToolError, match=r"^fetch error: refused private address 10.0.0.7"):
        f({"url": "http://mixed.example/"})


def test_unresolvable_host_is_a_fetch_error() -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    f = WebFetch(WebFetchSettings(), resolver=resolver)
    with pytest.raises(ToolError, match=r"^fetch error: cannot resolve host 'nowhere.invalid'"):
        f({"url": "https://nowhere.invalid/"})


def test_story_s4_assets_search_then_fetch(serve, tmp_path: Path) -> None:
    """The S4 story's mock results lead web_fetch to a page whose text has the answer."""
    stories = Path(__file__).parents[1] / "stories"
    page = (stories / "pages" / "local2_tool_calling.html").read_bytes()
    server = serve({"/local2_tool_calling.html": send(page)})
    template = (stories / "mock_results.json").read_text(encoding="utf-8")
    results = tmp_path / "mock_results.json"
    results.write_text(template.replace("{PAGE_SERVER}", f"http://127.0.0.1:{server.port}"))
    search = WebSearch(WebSearchSettings(provider="mock", mock_results=results))
    found = search({"query": "LoCAL2 Gemma tool calling"}, None).text
    top = next(line for line in found.splitlines() if line.startswith("URL: "))[5:]
    assert top == server.url("/local2_tool_calling.html")
    assert "Kestrel" not in found
    fetched = fetcher()({"url": top}).text
    assert "Kestrel is the name of the tool-calling loop" in fetched
    assert "Accept all" not in fetched and "Great write-up" not in fetched
    assert "Kestrel" not in search({"query": "What major AI news broke this week?"}).text


def _tls_files(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for ``name``."""
    import datetime as dt

    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "LoCAL2 test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def test_https_to_the_vetted_address_keeps_sni_and_certificate_checks(
    serve, tmp_path: Path
) -> None:
    import ssl

    ca, cert, key = _tls_files(tmp_path, "pinned.test")
    server = serve({"/t": send(b"over tls", "text/plain")})
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    server.httpd.socket = server_ctx.wrap_socket(server.httpd.socket, server_side=True)
    client_ctx = ssl.create_default_context(cafile=str(ca))
    cfg = WebFetchSettings(allow_hosts=["pinned.test", "other.test"], timeout_s=5)
    f = WebFetch(cfg, resolver=lambda host, port: ["127.0.0.1"], verify=client_ctx)
    result = f({"url": f"https://pinned.test:{server.port}/t"})
    assert text_of(result.text) == "over tls"
    assert server.seen[0][1]["Host"] == f"pinned.test:{server.port}"
    with pytest.raises(ToolError, match=r"^fetch error: .*(CERTIFICATE_VERIFY_FAILED|hostname)"):
        f({"url": f"https://other.test:{server.port}/t"})


def test_the_turns_question_focuses_web_fetch_in_the_graph(serve, tmp_path: Path) -> None:
    """Through a real turn: the person's question (not the model's arguments) picks the
    passages of a long page that reach the model."""
    from local2.models._scripted import ScriptedChatModel, reply
    from local2.service.agent import Agent
    from tests.kit.helpers import make_settings

    paragraphs = long_page(fact_at=38, count=400)
    server = serve({"/harbour": send("\n".join(paragraphs).encode(), "text/plain")})
    call = {"name": "web_fetch", "args": {"url": server.url("/harbour")}}
    model = ScriptedChatModel(replies=[reply("", tool_calls=[call]), reply("Biscuit.")])
    settings = make_settings(
        tmp_path,
        generator={"enabled_tools": ["web_fetch"]},
        web={"fetch": {"allow_hosts": ["127.0.0.1"]}},
    )
    agent = Agent(settings, chat_model=model, memory=None, critic=None)
    try:
        payload = agent.turns.ask("What was the lighthouse keeper's cat called?", "s1")
    finally:
        agent.close()
    [record] = payload["tool_calls"]
    assert "cat called Biscuit" in record["result"]
    assert "[Page shortened to fit the context" in record["result"]
    assert len(extracted_text(record["result"])) <= 32000 * 0.125 * 3


def test_page_budget_is_the_chosen_backends_context(tmp_path: Path) -> None:
    from local2.tools._web import web_tools
    from tests.kit.helpers import make_settings

    settings = make_settings(tmp_path)
    budgets = {
        backend: next(t for t in web_tools(settings, backend) if t.name == "web_fetch").run
        for backend in ("ollama", "embedded")
    }
    assert budgets["ollama"].budget_chars == int(settings.generator.num_ctx * 0.125 * 3)
    assert budgets["embedded"].budget_chars == int(settings.embedded.n_ctx * 0.125 * 3)
