"""firecrawl-py 4.x against WDS: the official Python SDK, unchanged, pointed at the stack."""
import time

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import ParseOptions


def test_scrape_with_formats(fc: Firecrawl, site: str):
    doc = fc.scrape(f"{site}/", formats=["markdown", "html", "links", "rawHtml"], max_age=0)
    assert "# Ecosystem home" in doc.markdown
    assert "<h1>Ecosystem home</h1>" in doc.html
    assert "<title>Ecosystem fixture</title>" in doc.raw_html
    assert f"{site}/docs/alpha" in doc.links
    assert doc.metadata.title == "Ecosystem fixture"
    assert doc.metadata.status_code == 200
    assert doc.metadata.source_url == f"{site}/"


def test_scrape_main_content_only(fc: Firecrawl, site: str):
    doc = fc.scrape(f"{site}/docs/alpha", formats=["markdown"], only_main_content=True, max_age=0)
    assert "# Alpha page" in doc.markdown
    assert doc.html is None


def test_crawl_with_polling(fc: Firecrawl, site: str):
    job = fc.crawl(f"{site}/", limit=10, sitemap="skip", poll_interval=1, timeout=120, scrape_options={"formats": ["markdown"]})
    assert job.status == "completed"
    urls = sorted(d.metadata.source_url for d in job.data)
    assert urls == [f"{site}/", f"{site}/docs/alpha", f"{site}/docs/beta"]
    assert all(d.markdown for d in job.data)


def test_start_crawl_then_status_and_errors(fc: Firecrawl, site: str):
    started = fc.start_crawl(f"{site}/", limit=2, sitemap="skip")
    assert started.id
    deadline = time.time() + 120
    status = fc.get_crawl_status(started.id)
    while status.status == "scraping" and time.time() < deadline:
        time.sleep(1)
        status = fc.get_crawl_status(started.id)
    assert status.status == "completed"
    assert status.completed == 2
    errors = fc.get_crawl_errors(started.id)
    assert errors.errors == []


def test_map(fc: Firecrawl, site: str):
    result = fc.map(f"{site}/")
    urls = {link.url for link in result.links}
    assert {f"{site}/", f"{site}/docs/alpha", f"{site}/docs/beta"} <= urls


def test_batch_scrape(fc: Firecrawl, site: str):
    job = fc.batch_scrape([f"{site}/docs/alpha", f"{site}/docs/beta"], formats=["markdown"], poll_interval=1, wait_timeout=120)
    assert job.status == "completed"
    assert job.completed == 2
    assert sorted(d.markdown.splitlines()[0] for d in job.data) == ["# Alpha page", "# Beta page"]


def test_search_finds_stored_pages(fc: Firecrawl, site: str):
    # The pages the tests above scraped and crawled are in the own search index (no provider configured).
    result = fc.search("alpha", limit=5)
    urls = [r.url for r in result.web]
    assert f"{site}/docs/alpha" in urls
    assert urls[0] == f"{site}/docs/alpha", "the page titled Alpha ranks first"
    assert result.news is None and result.images is None
    scraped = fc.search("alpha", limit=1, scrape_options={"formats": ["markdown"]})
    assert scraped.web[0].markdown.startswith("# Alpha page")


def test_parse_an_upload(fc: Firecrawl):
    page = b"<html><head><title>Uploaded</title></head><body><main><h1>From a file</h1><p>Parsed by WDS.</p></main></body></html>"
    doc = fc.parse(page, filename="upload.html", content_type="text/html")
    assert "# From a file" in doc.markdown
    assert doc.metadata.title == "Uploaded"


def test_parse_with_options(fc: Firecrawl):
    # ParseOptions is ScrapeOptions: the SDK sends its defaults (mobile: false, ...), which ask for nothing a parse cannot do.
    page = b"<html><body><main><h1>Main part</h1></main><footer>footer text</footer></body></html>"
    doc = fc.parse(page, filename="opts.html", content_type="text/html", options=ParseOptions(formats=["html", "markdown"], only_main_content=True))
    assert "Main part" in doc.html and "footer text" not in doc.html
    assert "# Main part" in doc.markdown


def test_parse_formats(fc: Firecrawl):
    formats = {f.format: f for f in fc.get_parse_formats()}
    assert formats["pdf"].kind == "document" and formats["pdf"].mime_types == ["application/pdf"] and formats["pdf"].available
    assert ".docx" in formats["docx"].extensions
    assert formats["png"].kind == "image" and formats["png"].mime_types == ["image/png"]
    assert ".jpeg" in formats["jpg"].extensions
    assert "text/html" in formats["html"].mime_types


def test_token_usage(fc: Firecrawl):
    usage = fc.get_token_usage()
    credits = fc.get_credit_usage()
    assert usage.plan_tokens == 99_999_999, "the stack's team has no credit limit"
    assert 0 < usage.remaining_tokens <= usage.plan_tokens
    assert credits.remaining_credits <= credits.plan_credits


def test_errors_surface_as_sdk_exceptions(fc: Firecrawl):
    with pytest.raises(Exception) as err:
        fc.get_crawl_status("not-a-uuid")
    assert "Invalid job ID format" in str(err.value)
