"""The stack and fixture site come from tests/python.test.ts (node), which runs pytest with
WDS_API_URL, WDS_API_KEY and WDS_SITE_URL set."""
import os

import pytest
from firecrawl import Firecrawl


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set: run this suite through `npm test -- python` (tests/python.test.ts)", returncode=2)
    return value


@pytest.fixture(scope="session")
def site() -> str:
    return _env("WDS_SITE_URL")


@pytest.fixture(scope="session")
def fc() -> Firecrawl:
    return Firecrawl(api_key=_env("WDS_API_KEY"), api_url=_env("WDS_API_URL"), max_retries=1)
