"""Drives `deja ui` in a real browser (Chromium through ChromeDriver, with
Selenium's Python client) and checks what a person sees.

Argument: one JSON object with base (http://IP:PORT, the page's address),
open (the file:// address `deja ui` handed the browser), chromium,
chromedriver, profile (a folder for the browser's profile), shots (where
screenshots go), and the ids of three sessions: tenant (found by the query
below), hostile (a transcript full of markup) and forget (forgotten through
the page). Exits 1 at the first failed check, naming it.

Another web service runs beside the page, on 127.0.0.1 (where local
development servers and tool pages live), and records the cookies the
browser sends it: the page's cookie must never be among them.
"""

import http.server
import json
import sys
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

cfg = json.loads(sys.argv[1])
base = cfg["base"]


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another local service: records the Cookie header of each request."""

    cookies = []

    def do_GET(self):
        Recorder.cookies.append(self.headers.get("Cookie") or "")
        body = b"<!doctype html><title>another service</title><p>another service</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_beside(ip):
    server = http.server.ThreadingHTTPServer((ip, 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://{ip}:{server.server_address[1]}"


other = serve_beside("127.0.0.1")
others = [other, other.replace("127.0.0.1", "localhost")]


def check(ok, what):
    if not ok:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


options = webdriver.ChromeOptions()
options.binary_location = cfg["chromium"]
for arg in (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--window-size=1280,1000",
    "--user-data-dir=" + cfg["profile"],
):
    options.add_argument(arg)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(cfg["chromedriver"]), options=options)
# A page replaced while it is read (a form's answer arriving) leaves stale
# elements behind: such a read is retried, as a person would look again.
wait = WebDriverWait(driver, 60, ignored_exceptions=[StaleElementReferenceException])


def body_text():
    return driver.find_element(By.TAG_NAME, "body").text


def shot(name):
    driver.save_screenshot(f"{cfg['shots']}/{name}.png")


def nothing_ran(where):
    # The stored script would set the title to exactly 'pwned'.
    check(driver.title.endswith(" · deja"), f"{where}: the page title is deja's own ({driver.title[:40]!r})")
    check(driver.execute_script("return window.pwned === undefined"), f"{where}: no stored script ran")
    for tag in ("script", "img", "iframe", "style"):
        check(not driver.find_elements(By.TAG_NAME, tag), f"{where}: no <{tag}> element in the page")


try:
    # Without the token the page is refused.
    driver.get(base + "/")
    check("needs the address" in body_text(), "a request without the token is refused")

    # The file `deja ui` handed the browser lets it in; the code leaves the address.
    check(cfg["open"].startswith("file://"), f"the browser is handed a file ({cfg['open']})")
    driver.get(cfg["open"])
    wait.until(lambda d: d.current_url.startswith(base))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.sessions li"))
    check(driver.current_url == base + "/", f"the code leaves the address ({driver.current_url})")
    check("token" not in driver.current_url, "no token in the address bar")
    names = [c["name"] for c in driver.get_cookies()]
    check(any(n.startswith("deja_ui_") for n in names), f"the page set its cookie ({names})")
    # A token in the address is dropped even when the cookie lets the browser in.
    driver.get(f"{base}/timeline?token=whatever")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.timeline"))
    check(driver.current_url == base + "/timeline", f"a token never stays in the address ({driver.current_url})")
    driver.get(f"{base}//evil.example/x?token=whatever")
    wait.until(lambda d: "token" not in d.current_url)
    check(driver.current_url.startswith(base + "/"), f"the address stays on the page ({driver.current_url})")

    # Other services on the loopback never receive the page's cookie.
    for other in others:
        driver.get(other + "/")
        wait.until(lambda d: "another service" in body_text())
        driver.get(other + "/x")
        wait.until(lambda d: "another service" in body_text())
    leaked = [c for c in Recorder.cookies if "deja_ui_" in c]
    check(len(Recorder.cookies) >= 2 * len(others), f"the other services were visited ({len(Recorder.cookies)} requests)")
    check(not leaked, f"no other service got the page's cookie ({leaked[:2]})")
    driver.get(base + "/")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.sessions li"))
    check(driver.find_elements(By.CSS_SELECTOR, "ul.sessions li"), "the front page lists the newest sessions")

    # Search the demo fixtures.
    box = driver.find_element(By.NAME, "q")
    box.send_keys("that tenant predicate bug")
    driver.find_element(By.CSS_SELECTOR, "form.search button").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ol.hits li.group"))
    first = driver.find_element(By.CSS_SELECTOR, "ol.hits li.group .session a.id").text
    check(first == cfg["tenant"], f"the tenant-predicate session comes first ({first})")
    marks = [m.text.lower() for m in driver.find_elements(By.CSS_SELECTOR, "li.group mark")]
    check("tenant" in marks and "predicate" in marks, f"matched words are highlighted ({marks[:6]})")
    shot("search")

    # The hit opens its session at that message.
    hit = driver.find_element(By.CSS_SELECTOR, "ol.hits li.group a.hit")
    hit.click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg.hit"))
    article = driver.find_element(By.CSS_SELECTOR, "article.msg.hit")
    anchor = article.get_attribute("id")
    check(driver.current_url.endswith("#" + anchor), f"the address points at the hit ({driver.current_url})")
    in_view = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top < window.innerHeight && r.bottom > 0;",
        article,
    )
    check(in_view, "the hit is on screen")
    check(driver.find_elements(By.CSS_SELECTOR, "article.msg.near"), "the hit's neighbours are marked")
    resume = driver.find_element(By.CSS_SELECTOR, ".resume").text
    # aider keeps no session ids: its reader says how to reload the history.
    check(
        resume.startswith("Cannot be resumed here: aider cannot reopen") and "aider --restore-chat-history" in resume,
        f"the session page gives the reader's resume advice ({resume[:80]!r})",
    )
    check(driver.find_elements(By.CSS_SELECTOR, "pre.code span.k"), "code blocks are highlighted")
    shot("session")

    # A long block is folded; it unfolds and folds again.
    fold = driver.find_element(By.CSS_SELECTOR, "details.fold")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", fold)
    block = fold.find_element(By.TAG_NAME, "pre")
    check(fold.get_attribute("open") is None and not block.is_displayed(), "a long block starts folded")
    fold.find_element(By.TAG_NAME, "summary").click()
    check(fold.get_attribute("open") is not None and block.is_displayed(), "it unfolds")
    fold.find_element(By.TAG_NAME, "summary").click()
    check(fold.get_attribute("open") is None and not block.is_displayed(), "it folds again")

    # Timeline and status.
    driver.find_element(By.LINK_TEXT, "Timeline").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.timeline"))
    check("sessions" in body_text(), "the timeline counts sessions")
    shot("timeline")
    driver.find_element(By.LINK_TEXT, "Status").click()
    wait.until(lambda d: d.find_elements(By.TAG_NAME, "h1"))
    text = body_text()
    check("Readers" in text and "aider" in text and "Agents" in text, "the status page reports readers and agents")
    shot("status")

    # Recap: the navigation leads there; over a year that holds the demo and
    # the hostile transcript, a square a day, the busy days shaded by the
    # stylesheet, every stored title as text.
    driver.find_element(By.LINK_TEXT, "Recap").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.calendar"))
    check(driver.current_url == base + "/recap", f"the navigation opens the recap ({driver.current_url})")
    driver.get(f"{base}/recap?since=2025-06-01&until=2026-06-01")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.calendar rect.day"))
    calendar = driver.find_element(By.CSS_SELECTOR, "svg.calendar")
    check(calendar.is_displayed() and calendar.size["width"] > 300, f"the calendar is drawn ({calendar.size})")
    days = driver.find_elements(By.CSS_SELECTOR, "svg.calendar rect.day")
    check(len(days) == 365, f"a square a day of the year ({len(days)})")
    busy = [r for r in days if "l0" not in r.get_attribute("class").split()]
    check(busy, "the days with sessions are shaded")
    fills = {r.value_of_css_property("fill") for r in busy} | {days[0].value_of_css_property("fill")}
    check("rgb(0, 0, 0)" not in fills and len(fills) >= 2, f"the stylesheet colours the squares ({fills})")
    text = body_text()
    check("quuxbanner" in text and "<script>document.title='pwned'" in text, "the hostile title is text in the recap")
    nothing_ran("recap page")
    shot("recap")

    # A hostile transcript shows as text and runs nothing.
    driver.get(f"{base}/session/{cfg['hostile']}")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg"))
    text = body_text()
    check("<script>document.title='pwned'" in text, "stored markup is shown as text")
    check("</recalled-memory>" in text, "stored text is shown as it is, tags and all")
    check("\x1b" not in text and "␛]0;pwned␇" in text, "escape sequences are shown as visible stand-ins")
    nothing_ran("session page")
    check(
        not driver.find_elements(By.CSS_SELECTOR, "a[href^='javascript']"),
        "no stored link became a link",
    )
    driver.get(f"{base}/search?q=quuxbanner")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "ol.hits li.group"))
    check("<script>" in body_text(), "the hostile hit's snippet is text")
    nothing_ran("search page")

    # Forget with confirmation: keeping it changes nothing; confirming forgets.
    driver.get(f"{base}/session/{cfg['forget']}")
    driver.find_element(By.CSS_SELECTOR, "p.actions a.danger").click()
    wait.until(lambda d: "Forget this session?" in d.find_element(By.TAG_NAME, "h1").text)
    driver.find_element(By.LINK_TEXT, "Keep it").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.msg"))
    check(cfg["forget"] in body_text(), "keeping it leaves the session in place")
    driver.find_element(By.CSS_SELECTOR, "p.actions a.danger").click()
    wait.until(lambda d: "Forget this session?" in d.find_element(By.TAG_NAME, "h1").text)
    driver.find_element(By.CSS_SELECTOR, "form.confirm button.danger").click()
    wait.until(lambda d: d.find_element(By.TAG_NAME, "h1").text == "Forgotten")
    check(cfg["forget"] in body_text() and "deja forget --undo" in body_text(), "the page says what forgetting did")
    driver.get(f"{base}/session/{cfg['forget']}")
    check(cfg["forget"] in body_text() and "Something went wrong" in body_text(), "the forgotten session is gone")

    # Nothing was even tried and blocked: a CSP violation would mean that
    # stored markup reached the page as markup.
    blocked = [e for e in driver.get_log("browser") if "Content Security Policy" in e.get("message", "")]
    check(not blocked, f"the browser blocked nothing under the page's policy ({blocked[:3]})")
    print("all checks passed", flush=True)
finally:
    driver.quit()
