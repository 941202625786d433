"""Schemathesis hooks for tests/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS=tests.schemathesis_hooks.hooks).

The fuzzer must never make WDS fetch anything but the local fixture site: every generated string
that a URL parser could read as an http(s) URL (any string containing "http", in any case) is
replaced by the fixture site's URL (WDS_FUZZ_TARGET) before the request is sent. Strings without
"http" cannot name an http(s) URL, so they still exercise the API's URL validation.
"""
import os

import schemathesis

TARGET = os.environ["WDS_FUZZ_TARGET"]


def _safe(value):
    if isinstance(value, str):
        return TARGET if "http" in value.lower() else value
    if isinstance(value, list):
        return [_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _safe(v) for k, v in value.items()}
    return value


@schemathesis.hook
def map_case(context, case):
    if case.body is not None and not isinstance(case.body, (bytes, bytearray)):
        case.body = _safe(case.body)
    if case.query:
        case.query = _safe(case.query)
    return case
