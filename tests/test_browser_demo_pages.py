"""Every page of the demo, as a visitor, an annotator (anna) and a manager (admin), at 1280 px
and at 390 px (a phone; visitors and annotators at 360 px too): no request answered 400 or
worse or failing, no request to another host, no console error, no horizontal scroll on any
page (a wide table scrolls inside its own box, the page does not), and no Python value (a
list in brackets; on the manager's pages True, False or None) printed for a person.

The pages are found the way a person finds them: from the home page (the login page for a
visitor), following every link of the site; a link that is not a page (an export, a
download) is fetched and its status checked. Screenshots of every page at both widths go to
test-artifacts/demo-pages/."""

import re
import time
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command

from projects.models import Project

from .test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = ARTIFACTS / "demo-pages"
ROLES = {  # role: (username, password); None: not logged in
    "visitor": None,
    "annotator": ("anna", "annolab-anna"),
    "manager": ("admin", "annolab-admin"),
}
# Crowd studies run on phones: the pages visitors and annotators see are also checked at
# 360 px, the narrowest phone in common use.
WIDTHS = {"visitor": (1280, 390, 360), "annotator": (1280, 390, 360), "manager": (1280, 390)}
# Django's own admin is not a page of the site's design; logging out is a form (POST),
# visited once at the end of each session.
NOT_CRAWLED = ("/admin/", "/accounts/logout/")
MAX_SHOT = 6000  # px: a screenshot's height at most
MAX_PAGES = 80  # per role and width: a crawl finding more has found a loop of new URLs


def page_key(url: str) -> str:
    """One visit per kind of page: numbers in the path and the query count as one."""
    parts = urlsplit(url)
    path = re.sub(r"/\d+(?=/|$)", "/<n>", parts.path)
    query = re.sub(r"=\d+", "=<n>", parts.query)
    return f"{path}?{query}" if query else path


@dataclass
class Watch:
    """What the browser did while one page was open."""

    origin: str
    page: str = ""
    open: bool = False
    problems: list[str] = field(default_factory=list)
    pending: set = field(default_factory=set)

    def note(self, what: str) -> None:
        self.problems.append(f"{self.page}: {what}")

    def on_request(self, request) -> None:
        self.pending.add(request)
        parts = urlsplit(request.url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            self.note(f"request to another host: {request.url}")

    def on_finished(self, request) -> None:
        self.pending.discard(request)

    def on_response(self, response) -> None:
        if response.status >= 400:
            self.note(f"{response.status} for {response.url}")

    def on_failed(self, request) -> None:
        self.pending.discard(request)
        # Leaving a page aborts what it was still loading (its favicon, a point cloud), and
        # a media element stops its download once it has what it needs (its status is
        # still checked): other failures count.
        aborted = request.failure == "net::ERR_ABORTED"
        if not aborted or (self.open and request.resource_type != "media"):
            self.note(f"request failed ({request.failure}): {request.url}")

    def on_console(self, message) -> None:
        if message.type == "error":
            self.note(f"console error: {message.text}")

    def on_page_error(self, error) -> None:
        self.note(f"script error: {error}")


def settle(page, watch: Watch, limit: float = 10.0) -> None:
    """Wait until the page has loaded and every request it made has ended (what a media
    element keeps streaming after `limit` seconds is left to it)."""
    page.wait_for_load_state("load")
    end = time.monotonic() + limit
    while watch.pending and time.monotonic() < end:
        page.wait_for_timeout(50)
    page.wait_for_timeout(50)  # a script's requests started right after load


def shot_name(role: str, width: int, key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-") or "home"
    return f"{role}-{width}-{name}.png"


class Crawl:
    def __init__(self, page, base: str, watch: Watch, downloads: dict, pages: set):
        self.page, self.base, self.watch = page, base, watch
        self.downloads = downloads  # key -> status line, shared by every crawl
        self.pages = pages  # keys known to be HTML pages for this role
        self.seen_schemes: set[str] = set()

    def same_site(self, url: str) -> bool:
        return url.startswith(self.base + "/")

    def links(self) -> list[str]:
        hrefs = self.page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
        return [h.split("#")[0] for h in hrefs if self.same_site(h.split("#")[0])]

    def is_page(self, url: str, key: str) -> bool:
        """Fetch a link once: an HTML page is visited; anything else (an export, a JSON
        view, a download) is checked by its status alone."""
        if key in self.downloads:
            return False
        if key in self.pages:
            return True
        response = self.page.request.get(url, max_redirects=5)
        kind = response.headers.get("content-type", "")
        if response.status >= 400:
            self.downloads[key] = f"{response.status} for {url}"
            self.watch.problems.append(f"link {url}: answered {response.status}")
            return False
        if kind.startswith("text/html"):
            self.pages.add(key)
            return True
        self.downloads[key] = f"{response.status} {kind}"
        return False

    def visit(self, url: str, role: str, width: int, *, no_scroll: bool) -> list[str]:
        page, watch = self.page, self.watch
        watch.page = f"{role} {width}px {url.removeprefix(self.base)}"
        page.goto(url)  # what the page before was still loading is aborted here
        watch.open = True
        settle(page, watch)
        if no_scroll:
            wide, inner = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if wide > inner:
                watch.note(f"scrolls sideways: {wide} px of content in a {inner} px window")
        # A value printed the way Python writes a list or a dict: "['driver', 'passenger']"
        python = page.evaluate(
            "(document.body.innerText.match(/[\\[{]'[^'\\n]*'(, |: |[\\]}])/) || [''])[0]"
        )
        if python:
            watch.note(f"shows a Python value: {python}")
        # Managers read the configuration: switches in words, not Python's (the API
        # reference, a description of JSON, is left out).
        if role == "manager" and "/api/" not in url:
            word = page.evaluate(
                "((document.querySelector('main') || document.body).innerText"
                ".match(/.{0,40}\\b(True|False|None)\\b/) || [''])[0]"
            )
            if word:
                watch.note(f"shows a Python word: {word}")
        self.seen_schemes.update(
            page.eval_on_selector_all(
                "#annotate-form fieldset.scheme, #annotate-form .bws-table",
                "els => els.map(e => e.classList.contains('bws-table') ? 'bws'"
                " : [...e.classList].find(c => c.startsWith('scheme-')).slice(7))",
            )
        )
        # The whole page, unless it is as long as the API reference (the first screens then)
        tall = page.evaluate("document.documentElement.scrollHeight") > MAX_SHOT
        page.screenshot(
            path=SHOTS / shot_name(role, width, page_key(url)),
            full_page=not tall,
            clip={"x": 0, "y": 0, "width": width, "height": MAX_SHOT} if tall else None,
        )
        watch.open = False
        return self.links()

    def run(self, seeds: list[str], role: str, width: int, *, no_scroll: bool) -> list[str]:
        """Visit every page reachable from the seeds; the keys visited, in order."""
        queue = deque(self.base + s for s in seeds)
        visited: list[str] = []
        while queue:
            url = queue.popleft()
            key = page_key(url)
            if key in visited or any(key.startswith(p) for p in NOT_CRAWLED):
                continue
            if not self.is_page(url, key):
                continue
            visited.append(key)
            if len(visited) > MAX_PAGES:
                self.watch.problems.append(f"{role} {width}px: more than {MAX_PAGES} pages")
                break
            queue.extend(self.visit(url, role, width, no_scroll=no_scroll))
        return visited


def test_every_demo_page_as_visitor_annotator_and_manager(browser_page, live_server):  # noqa: F811
    started = time.monotonic()
    call_command("load_demo", stdout=open("/dev/null", "w"))
    demo_setup = time.monotonic() - started
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()

    page, base = browser_page, live_server.url
    page.set_default_timeout(20_000)
    watch = Watch(origin=base)
    page.on("request", watch.on_request)
    page.on("response", watch.on_response)
    page.on("requestfinished", watch.on_finished)
    page.on("requestfailed", watch.on_failed)
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)

    downloads: dict[str, str] = {}
    visited: dict[tuple[str, int], list[str]] = {}
    schemes_seen: set[str] = set()
    for role, account in ROLES.items():
        pages: set[str] = set()
        for width in WIDTHS[role]:
            page.set_viewport_size({"width": width, "height": 900})
            crawl = Crawl(page, base, watch, downloads, pages)
            if account is None:
                seeds = ["/accounts/login/"]
            else:
                watch.page = f"{role} {width}px log in"
                log_in(page, base, *account)
                page.wait_for_url(f"{base}/")
                seeds = ["/"]
            # No page scrolls sideways, a manager's included: its wide tables scroll in a box.
            visited[role, width] = crawl.run(seeds, role, width, no_scroll=True)
            if role == "annotator":
                schemes_seen |= crawl.seen_schemes
            if account is not None:
                watch.page = f"{role} {width}px log out"
                page.goto(f"{base}/")
                page.get_by_role("button", name=f"Log out {account[0]}").click()
                page.wait_for_url("**/accounts/login/")
                watch.open = True
                settle(page, watch)
                page.screenshot(path=SHOTS / shot_name(role, width, "logged-out"), full_page=True)
                watch.open = False
    elapsed = time.monotonic() - started

    summary = "\n".join(
        f"  {role} {width}px: {len(keys)} pages: {', '.join(keys)}"
        for (role, width), keys in visited.items()
    )
    problems = list(dict.fromkeys(watch.problems))  # a repeated message once
    assert not problems, (
        f"{len(problems)} problems on the demo pages:\n  "
        + "\n  ".join(problems)
        + f"\npages visited:\n{summary}"
    )

    # The crawl reached what a person reaches: each project's pages, an annotation form of
    # every scheme type in the demo, the done page, the manager's pages and the downloads.
    demo_types = {s["type"] for p in Project.objects.all() for s in p.schemes}
    assert demo_types <= schemes_seen, f"forms never drawn: {demo_types - schemes_seen}"
    annotator_pages = set(visited["annotator", 390])
    manager_pages = set(visited["manager", 1280])
    # The crowd study has no annotators but the participants its link makes.
    annotated = set(
        Project.objects.filter(memberships__user__username="anna").values_list("slug", flat=True)
    )
    assert annotated == {"mt-ranking", "agreement-demo"}
    for slug in Project.objects.values_list("slug", flat=True):
        if slug in annotated:
            assert f"/projects/{slug}/" in annotator_pages, summary
            assert f"/projects/{slug}/annotate/" in annotator_pages, summary
        assert f"/projects/{slug}/" in manager_pages, summary
        assert f"/projects/{slug}/export/?format=jsonl" in downloads, downloads
    assert "/projects/agreement-demo/annotate/<n>/" in annotator_pages, summary
    assert "/projects/mt-ranking/bws/" in manager_pages, summary
    assert "/projects/agreement-demo/admin/iaa" in manager_pages, summary
    assert "/api/docs/" in annotator_pages, summary
    # The manager's pages, checked on a phone too (no sideways scroll)
    for key in (
        "/",
        "/projects/mt-ranking/",
        "/projects/mt-ranking/bws/",
        "/projects/mt-ranking/quality/",
        "/projects/agreement-demo/quality/",
        "/api/docs/",
    ):
        assert key in visited["manager", 390], summary
    assert "/projects/mt-ranking/export/?format=csv" in downloads, downloads
    for width in WIDTHS["annotator"]:
        assert set(visited["annotator", width]) == annotator_pages, summary
    print(f"demo loaded in {demo_setup:.0f} s; every page checked in {elapsed:.0f} s")


def test_best_worst_on_a_phone_by_touch_and_by_keys(browser_page, live_server, tmp_path):  # noqa: F811
    """At 390 px each item is a card whose Best/Worst buttons are large enough to touch and
    inside the screen; touching them and pressing the keys both choose, and the answer is
    stored as chosen."""
    import shutil

    from django.conf import settings

    from annotation.models import Annotation
    from projects.models import Membership
    from projects.services import import_project
    from projects.tests.factories import UserFactory

    shutil.copytree(settings.BASE_DIR / "examples" / "mt_two_dims", tmp_path / "mt")
    project = import_project(config_path=tmp_path / "mt" / "config.yaml", slug="phone").project
    user = UserFactory(username="pia")
    Membership.objects.create(user=user, project=project, role="annotator")
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server.url, "pia", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/phone/annotate/")
    # The demo's instructions come first (and fit the phone); Start leads to the tuple.
    page.wait_for_url("**/projects/phone/instructions/**")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_role("link", name="Start").click()
    page.wait_for_selector("#annotate-form")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    labels = page.locator(".choice-label")
    assert labels.count() == 16  # 4 items x best/worst x 2 schemes
    for n in range(labels.count()):
        box = labels.nth(n).bounding_box()
        assert box["height"] >= 40 and box["width"] >= 40, (n, box)
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (n, box)
    shown = page.eval_on_selector_all(
        'input[name="fluency__best"]', "inputs => inputs.map(i => i.value)"
    )
    page.locator('label[for="fluency-best-1"]').click()  # fluency: best A
    page.keyboard.press("w")  # fluency: worst B
    page.locator('label[for="adequacy-best-3"]').click()  # adequacy: best C
    page.keyboard.press("q")  # adequacy: worst A
    page.screenshot(path=ARTIFACTS / "bws-phone.png", full_page=True)
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    stored = {
        a.scheme: {"best": a.value["best"], "worst": a.value["worst"]}
        for a in Annotation.objects.filter(annotator=user)
    }
    assert stored == {
        "fluency": {"best": shown[0], "worst": shown[1]},
        "adequacy": {"best": shown[2], "worst": shown[0]},
    }
