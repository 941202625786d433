"""firecrawl-py's V1FirecrawlApp against WDS's /v1 routes (run by v1.test.ts with WDS_API_URL,
WDS_API_KEY and WDS_SITE_URL set): scrape, map, crawl, batch scrape and search round trips.
Prints one JSON line with what came back; the node test asserts on it."""
import json
import os

from firecrawl import V1FirecrawlApp

app = V1FirecrawlApp(api_key=os.environ["WDS_API_KEY"], api_url=os.environ["WDS_API_URL"])
site = os.environ["WDS_SITE_URL"]

scrape = app.scrape_url(f"{site}/a", formats=["markdown", "links"])
mapped = app.map_url(f"{site}/", ignore_sitemap=True)
crawl = app.crawl_url(f"{site}/", limit=10, max_depth=1, ignore_sitemap=True, poll_interval=1)
batch = app.batch_scrape_urls([f"{site}/a", f"{site}/b"], formats=["markdown"], poll_interval=1)
found = app.search("zebrafish", limit=5)
credits = app.get_credit_usage()

print(json.dumps({
    "scrape": {"markdown": scrape.markdown, "links": scrape.links, "sourceURL": (scrape.metadata or {}).get("sourceURL")},
    "map": mapped.links,
    "crawl": {"status": crawl.status, "urls": sorted(d.metadata["sourceURL"] for d in crawl.data)},
    "batch": {"status": batch.status, "urls": sorted(d.metadata["sourceURL"] for d in batch.data)},
    "search": [r["url"] if isinstance(r, dict) else r.url for r in found.data],
    "credits": credits.data.remaining_credits,
}))
