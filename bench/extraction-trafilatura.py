"""Baseline for bench/extraction.ts: trafilatura (PyPI) on the same pages, default settings.

Reads a JSON list of {"id", "html_gz", "url"} on stdin, writes {"texts": {id: text}, "cpuMs": total}
on stdout. CPU time covers extraction only (not reading the files), as for the other systems.
"""
import gzip
import json
import sys
import time

import trafilatura

pages = json.load(sys.stdin)
htmls = [(p["id"], p["url"], gzip.open(p["html_gz"], "rb").read().decode("utf-8", "replace")) for p in pages]
texts = {}
c0 = time.process_time()
for pid, url, html in htmls:
    try:
        texts[pid] = trafilatura.extract(html, url=url) or ""
    except Exception:  # a page trafilatura cannot read scores as empty, as in WCXB's own harness
        texts[pid] = ""
cpu_ms = (time.process_time() - c0) * 1000
json.dump({"texts": texts, "cpuMs": cpu_ms}, sys.stdout)
